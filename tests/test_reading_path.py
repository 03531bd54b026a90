"""The reader's path (book/intro.md, "How to read this book"): every chapter has a Key idea box, a
main line of at most about 3,500 words, Further reading, Notes on the paper where it follows a
source, at least five exercises, and no prose paragraph with more than four glued values.

The measure itself (tools/reading_path.py) is tested first on small texts whose counts are known
by hand, so a chapter cannot pass because the counter stopped counting.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from reading_path import (  # noqa: E402
    GLUE_PER_PARAGRAPH_MAX,
    MAIN_LINE_MAX,
    chapters,
    measure,
)

FENCE = "`" * 3
# Part I teaches standard material; every later part follows a paper (Part VII audits them all).
NO_SOURCE = {"foundations/local_dp", "foundations/central_dp", "foundations/hypothesis_testing",
             "foundations/zcdp"}


def _chapter(*blocks: str) -> str:
    return "---\nkernelspec:\n  name: x\n---\n" + "\n".join(blocks) + "\n"


def test_measure_splits_main_side_and_exercises() -> None:
    text = _chapter(
        "# Title", "", "one two three", "",
        f"{FENCE}{{admonition}} Key idea", "four five", FENCE, "",
        f"{FENCE}{{admonition}} Aside: edge cases", ":class: dropdown", "six seven eight", FENCE,
        f"{FENCE}{{admonition}} Why", ":class: dropdown", "nine ten", FENCE,
        f"{FENCE}{{code-cell}} ipython3", "x = 1  # not prose at all", FENCE,
        "$$", "a + b = c", "$$",
        "## Notes on the paper", "eleven twelve thirteen",
        "### A note", "fourteen",
        "## Further reading", "fifteen",
        "## Exercises", f"{FENCE}{{exercise-start}}", ":label: ex-a", "sixteen seventeen",
        f"{FENCE}", f"{FENCE}{{exercise-start}}", ":label: ex-b", "eighteen", FENCE)
    m = measure(text)
    assert (m.main, m.side, m.exercises) == (5, 10, 3)
    assert m.key_idea and m.notes_on_the_paper and m.further_reading
    assert m.n_exercises == 2


def test_measure_counts_math_and_roles_as_one_word() -> None:
    m = measure(_chapter("See $x^2 + y^2$ and {prf:ref}`thm-a` and `code here` now."))
    assert m.main == 7


def test_measure_counts_glue_per_paragraph_but_not_in_tables() -> None:
    glue = " ".join(f"{{glue:text}}`v{i}`" for i in range(3))
    m = measure(_chapter(glue, glue, "", glue, "", "| a | " + glue + " " + glue + " |"))
    assert m.max_glue_per_paragraph == 6
    assert measure(_chapter(glue, "", glue)).max_glue_per_paragraph == 3


def test_measure_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="text"):
        measure(b"bytes")  # type: ignore[arg-type]


def test_reading_minutes_round_up_to_five() -> None:
    assert measure(_chapter("word " * 10)).reading_minutes == 5
    assert measure(_chapter("")).reading_minutes == 0


# The chapters of the parts: not the front matter (the course page is a notebook) nor the parts'
# appendices of checks.
CHAPTERS = [p for p in chapters(ROOT / "book") if "front" not in p.parts
            and not re.search(r"^# Appendix", p.read_text(encoding="utf-8"), re.MULTILINE)]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: str(p.relative_to(ROOT / "book")))
def test_every_chapter_follows_the_readers_path(path: Path) -> None:
    m = measure(path.read_text(encoding="utf-8"))
    name = str(path.relative_to(ROOT / "book").with_suffix(""))
    problems = []
    if not m.key_idea:
        problems.append("no Key idea admonition")
    if not m.further_reading:
        problems.append("no Further reading section")
    if name not in NO_SOURCE and not m.notes_on_the_paper:
        problems.append("no Notes on the paper section")
    if m.main > MAIN_LINE_MAX * 1.03:
        problems.append(f"main line of {m.main} words (at most about {MAIN_LINE_MAX})")
    if m.max_glue_per_paragraph > GLUE_PER_PARAGRAPH_MAX:
        problems.append(f"a paragraph with {m.max_glue_per_paragraph} glued values")
    if m.n_exercises < 5:
        problems.append(f"{m.n_exercises} exercises (at least 5)")
    assert not problems, f"{name}: " + "; ".join(problems)
