"""How a chapter reads: the words of its main line, its side material and its exercises.

The book's convention (``book/intro.md``, "How to read this book"): a chapter teaches its main line
first (setting, definitions, theorems, algorithms, a worked example, the figure that shows the
idea) in at most about 3,500 words; digressions sit in collapsed asides, corrections of the source
in "Notes on the paper", verification that does not teach in an appendix or a hidden cell. This
module measures a chapter (a MyST-markdown notebook) against that convention; ``tests/test_book.py``
enforces it and ``book/front/course.md`` turns the counts into each lecture's reading time.

What counts as side material: a ``note``-like directive (``note``, ``seealso``, ``margin``,
``sidebar``, ``hint``, ``important``, ``warning``, ...), an ``admonition`` whose title starts with
"Aside" or "Note", any directive with ``:class: dropdown``, and the sections "Notes on the paper",
"Further reading", "Appendix ..." and "How ... checked". Code cells and display math are not
prose. Everything from the "Exercises" heading on is exercise material. Inline math and roles
(``{ref}`...```, ``{glue:text}`...```) count as one word each.

Usage: ``python tools/reading_path.py [book]`` prints one row per chapter.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

MAIN_LINE_MAX = 3500            # words of main-line prose, "about": the test allows 3% over
GLUE_PER_PARAGRAPH_MAX = 4      # glued values in one prose paragraph (tables are not paragraphs)
WORDS_PER_MINUTE = 50           # careful reading of mathematics with its formulas and figures

_SIDE_DIRECTIVES = {"note", "seealso", "aside", "margin", "sidebar", "dropdown", "important",
                    "hint", "attention", "caution", "warning", "danger", "error", "tip"}
_NOT_PROSE = {"code-cell", "math"}
_SIDE_HEADING = re.compile(r"notes? on the paper|further reading|appendix|how .*checked|"
                           r"how we know|verification", re.IGNORECASE)
_OPEN = re.compile(r"^(`{3,}|:{3,})\{([\w:-]+)\}(.*)$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


@dataclass(frozen=True)
class ChapterMeasure:
    """Word counts of one chapter and the presence of its conventional parts."""

    main: int
    side: int
    exercises: int
    n_exercises: int
    key_idea: bool
    notes_on_the_paper: bool
    further_reading: bool
    max_glue_per_paragraph: int

    @property
    def reading_minutes(self) -> int:
        """Minutes to read the main line at ``WORDS_PER_MINUTE``, rounded up to 5 minutes."""
        return 5 * -(-self.main // (5 * WORDS_PER_MINUTE))


def _count_words(line: str) -> int:
    line = re.sub(r"\$[^$]+\$", " x ", line)
    line = re.sub(r"\{[\w:-]+\}`[^`]*`", " x ", line)
    line = re.sub(r"`[^`]*`", " x ", line)
    return len(_WORD.findall(line))


def _strip_front_matter(lines: list[str]) -> list[str]:
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() == "---":
                return lines[end + 1:]
    return lines


def measure(text: str) -> ChapterMeasure:
    """Measure one chapter's MyST-markdown source ``text`` (see the module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    counts = {"main": 0, "side": 0, "exercises": 0}
    open_blocks: list[tuple[str, bool, bool]] = []     # (closing fence, side?, prose?)
    side_level: int | None = None
    in_exercises = in_display_math = False
    found = {"key": False, "notes": False, "further": False}
    n_exercises = max_glue = paragraph_glue = 0
    for line in _strip_front_matter(text.splitlines()):
        stripped = line.strip()
        heading = None if open_blocks else re.match(r"^(#+)\s+(.*)", line)
        if heading:
            level, title = len(heading.group(1)), heading.group(2)
            if side_level is not None and level <= side_level:
                side_level = None
            if re.match(r"exercises?\b", title, re.IGNORECASE):
                in_exercises = True
            elif _SIDE_HEADING.search(title) and not in_exercises:
                side_level = level
                found["notes"] |= bool(re.search(r"notes? on the paper", title, re.IGNORECASE))
                found["further"] |= bool(re.search(r"further reading", title, re.IGNORECASE))
            continue
        opening = _OPEN.match(stripped)
        if opening:
            fence, name, argument = opening.groups()
            side = name in _SIDE_DIRECTIVES or (
                name == "admonition" and re.match(r"(aside|note)", argument.strip(), re.IGNORECASE))
            found["key"] |= name == "admonition" and bool(
                re.match(r"key idea", argument.strip(), re.IGNORECASE))
            n_exercises += name == "exercise-start" or name == "exercise"
            open_blocks.append((fence, bool(side), name not in _NOT_PROSE))
            continue
        if open_blocks and stripped == open_blocks[-1][0]:
            open_blocks.pop()
            continue
        if open_blocks and re.match(r"^:[\w-]+:", stripped):
            if stripped.startswith(":class:") and "dropdown" in stripped:
                fence, _, prose = open_blocks[-1]
                open_blocks[-1] = (fence, True, prose)
            continue
        if stripped.startswith("$$"):
            if stripped == "$$" or not stripped.endswith("$$") or len(stripped) == 2:
                in_display_math = not in_display_math
            continue
        if in_display_math or not all(prose for _, _, prose in open_blocks):
            continue
        if not stripped:
            max_glue, paragraph_glue = max(max_glue, paragraph_glue), 0
        elif not stripped.startswith("|"):
            paragraph_glue += len(re.findall(r"\{glue:text\}", line))
        if in_exercises:
            counts["exercises"] += _count_words(line)
        elif side_level is not None or any(side for _, side, _ in open_blocks):
            counts["side"] += _count_words(line)
        else:
            counts["main"] += _count_words(line)
    return ChapterMeasure(
        main=counts["main"], side=counts["side"], exercises=counts["exercises"],
        n_exercises=n_exercises, key_idea=found["key"], notes_on_the_paper=found["notes"],
        further_reading=found["further"], max_glue_per_paragraph=max(max_glue, paragraph_glue))


def chapters(book: Path) -> list[Path]:
    """The chapters under ``book``: MyST-markdown notebooks (files with a ``kernelspec``)."""
    return sorted(path for path in book.rglob("*.md") if ".ipynb_checkpoints" not in path.parts
                  and re.search(r"^kernelspec:", path.read_text(encoding="utf-8"), re.MULTILINE))


def main() -> None:
    book = Path(sys.argv[1] if len(sys.argv) > 1 else "book")
    for path in chapters(book):
        m = measure(path.read_text(encoding="utf-8"))
        print(f"{path!s:42s} main {m.main:5d} side {m.side:5d} exercises {m.exercises:5d} "
              f"({m.n_exercises}) key {int(m.key_idea)} notes {int(m.notes_on_the_paper)} "
              f"further {int(m.further_reading)} glue/para {m.max_glue_per_paragraph} "
              f"~{m.reading_minutes} min")


if __name__ == "__main__":
    main()
