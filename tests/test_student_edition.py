"""The student edition: solutions stripped from the sources (unit tests, run by ``make test``) and
absent from the built website and notebooks while the instructor edition keeps them (marked
``student``, run by ``make student`` after both builds)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from project_tools import load_tool

ROOT = Path(__file__).resolve().parents[1]
STUDENT = ROOT / "_build" / "student"
STUDENT_HTML = STUDENT / "_build" / "html"
INSTRUCTOR_HTML = ROOT / "_build" / "html"

student_edition = load_tool("student_edition")

SAMPLE = """# A chapter

```{exercise-start}
:label: ex-one
```
Compute 1 + 1.
```{exercise-end}
```

```{solution-start} ex-one
:class: dropdown
```
It is 2.

```{code-cell} ipython3
print(1 + 1)
```
```{solution-end}
```

Text after.
"""


def _chapters() -> list[Path]:
    return sorted(p for p in (ROOT / "book").rglob("*.md")
                  if re.search(r"^kernelspec:", p.read_text(encoding="utf-8"), re.MULTILINE))


def _built_chapters() -> list[Path]:
    """The chapters the table of contents builds (the book sets only_build_toc_files)."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"file:\s*(\S+)", toc))
    return [p for p in _chapters() if str(p.relative_to(ROOT).with_suffix("")) in listed]


def _solutions(text: str) -> list[str]:
    return [m.group(0) for m in student_edition.SOLUTION.finditer(text)]


def test_strip_removes_solutions_and_keeps_the_rest() -> None:
    stripped = student_edition.strip_solutions(SAMPLE)
    assert "It is 2" not in stripped and "print(1 + 1)" not in stripped
    assert "Compute 1 + 1." in stripped and ":label: ex-one" in stripped
    assert stripped.endswith("Text after.\n")
    assert student_edition.strip_solutions(stripped) == stripped


def test_unpaired_fences_are_refused() -> None:
    broken = SAMPLE.replace("```{solution-end}\n```\n", "")
    with pytest.raises(ValueError, match="unpaired"):
        student_edition.strip_solutions(broken)


def test_student_sources_keep_every_exercise_and_no_solution(tmp_path: Path) -> None:
    chapters = student_edition.make_sources(ROOT, tmp_path / "source")
    assert len(chapters) == len(_chapters())
    for original in _chapters():
        text = original.read_text(encoding="utf-8")
        copy = (tmp_path / "source" / original.relative_to(ROOT)).read_text(encoding="utf-8")
        labels = re.findall(r"```\{exercise-start\}\n:label: (\S+)", text)
        assert labels == re.findall(r"```\{exercise-start\}\n:label: (\S+)", copy)
        assert "solution-start" not in copy and "solution-end" not in copy
        assert len(_solutions(text)) == text.count("{solution-start}")  # every block matched
    student_edition.export_notebooks(chapters, tmp_path / "source", tmp_path / "notebooks")
    assert len(list((tmp_path / "notebooks").glob("*.ipynb"))) == len(chapters)


def _page_text(page: Path) -> str:
    """The visible text of a built page: tags removed, entities decoded, spaces collapsed."""
    raw = page.read_text(encoding="utf-8")
    raw = re.sub(r"<(script|style)\b.*?</\1>", " ", raw, flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def _code_lines(solution: str) -> list[str]:
    """Distinctive code lines of a solution (long enough not to occur by chance elsewhere)."""
    code = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", solution, re.DOTALL)
    lines = [" ".join(line.split()) for block in code for line in block.splitlines()]
    return [line for line in lines if len(line) >= 40 and not line.startswith("#")]


@pytest.mark.student
def test_no_solution_reaches_the_student_edition() -> None:
    for folder in (STUDENT_HTML, INSTRUCTOR_HTML, STUDENT / "notebooks"):
        if not folder.exists():
            pytest.fail(f"{folder} is missing: run `make student` (it builds both editions)")
    checked = 0
    for chapter in _built_chapters():
        relative = chapter.relative_to(ROOT).with_suffix(".html")
        solutions = _solutions(chapter.read_text(encoding="utf-8"))
        student_page = (STUDENT_HTML / relative).read_text(encoding="utf-8")
        instructor_page = (INSTRUCTOR_HTML / relative).read_text(encoding="utf-8")
        # sphinx-exercise renders each solution as a "solution" admonition
        assert student_page.count('class="solution') == 0, relative
        assert instructor_page.count('class="solution') == len(solutions), relative
        assert student_page.count('class="exercise') == instructor_page.count('class="exercise')
        student_text = _page_text(STUDENT_HTML / relative)
        instructor_text = _page_text(INSTRUCTOR_HTML / relative)
        notebook = STUDENT / "notebooks" / "_".join(
            chapter.relative_to(ROOT / "book").with_suffix(".ipynb").parts)
        notebook_code = "\n".join(" ".join("".join(cell["source"]).split())
                                  for cell in json.loads(notebook.read_text())["cells"])
        rest = " ".join(student_edition.strip_solutions(
            chapter.read_text(encoding="utf-8")).split())  # what students may see
        for solution in solutions:
            for line in _code_lines(solution):
                if line in rest:
                    continue  # the same line also appears outside the solutions
                if line in instructor_text:  # solution code shown to the instructor ...
                    assert line not in student_text, (relative, line)  # ... never to students
                    checked += 1
                assert line not in notebook_code, (notebook.name, line)
    assert checked > 0, "no solution code line was found in the instructor edition"


def _glue_keys(text: str) -> tuple[set[str], list[str]]:
    """Keys the code of ``text`` can glue: every quoted string (``glue("key", ...)``, or keys
    listed in a loop), and the literal prefixes of f-string keys."""
    literal = set(re.findall(r"""["']([\w-]+)["']""", text))
    prefixes = re.findall(r"""\bglue\(\s*f["']([^"'{]*)\{""", text)
    return literal, prefixes


@pytest.mark.parametrize("chapter", _chapters(), ids=lambda p: str(p.relative_to(ROOT / "book")))
def test_every_glued_value_outside_solutions_is_computed_outside_them(chapter: Path) -> None:
    """Glue is page-local and the student edition drops the solutions' code: a value shown in the
    main text or in an exercise must be glued by a cell that is not inside a solution."""
    stripped = student_edition.strip_solutions(chapter.read_text(encoding="utf-8"))
    used = set(re.findall(r"\{glue:text\}`([^`:]+)", stripped))
    literal, prefixes = _glue_keys(stripped)
    missing = sorted(key for key in used
                     if key not in literal and not any(key.startswith(p) for p in prefixes))
    assert not missing, f"glued only inside solutions (no student edition can show them): {missing}"
