"""The course pack (``tools/coursepack.py``) on a tiny synthetic book: fake portable notebooks,
website, wheel and lock in ``tmp_path``; no build needed. The real pack is made by
``make coursepack``, which runs the same solution check on it."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from project_tools import load_tool

ROOT = Path(__file__).resolve().parents[1]
coursepack = load_tool("coursepack")

SOLUTION_CODE = "answer = sum(randomized_response(bit, eps0=1.0) for bit in bits)"
SOLUTION_PROSE = "The estimator is unbiased because each report flips with the same chance."
SHARED_CODE = "reports = shuffle_lib.shuffler.shuffle(reports, rng=np.random.default_rng(7))"
LOCK = """\
# a small lock
cvxpy==1.9.3
dp-accounting==0.6.0
ipykernel==7.4.0
jupyterlab==4.6.6
numpy==2.4.6
pandas==3.1.1
scikit-learn==1.9.1
tqdm==4.70.1
"""
PYPROJECT = """\
[project]
name = "shuffle_lib"
requires-python = ">=3.11"
dependencies = ["numpy", "pandas>=2", "cvxpy"]
"""
DISTRIBUTIONS = {"numpy": "numpy", "pandas": "pandas", "sklearn": "scikit-learn",
                 "tqdm": "tqdm", "dp_accounting": "dp-accounting", "cvxpy": "cvxpy"}


def _cell(kind: str, source: str, tags: list[str] | None = None) -> dict:
    cell = {"cell_type": kind, "metadata": {"tags": tags} if tags else {}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def _notebook(path: Path, cells: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}), encoding="utf-8")


def _chapter(edition: str) -> list[dict]:
    cells = [
        _markdown("# 6. Amplification by shuffling"),
        _cell("code", "import numpy as np\nfrom tqdm.auto import tqdm\nimport shuffle_lib\n"
                      f"{SHARED_CODE}\nadult = shuffle_lib.datasets.adult(n=100, rng=0)\n"
                      "datasets = {'a': adult}\nnames = list(datasets.items())"),
        _markdown("**Exercise 6.1** Estimate the mean of the bits."),
    ]
    if edition == "instructor":
        cells += [
            _markdown(f"<details>\n<summary>Solution to Exercise 6.1</summary>\n\n"
                      f"{SOLUTION_PROSE}\n\n</details>\n"),
            _cell("code", f"from sklearn.linear_model import LinearRegression\n{SOLUTION_CODE}\n"
                          f"{SHARED_CODE}", tags=["solution"]),
        ]
    return [*cells, _markdown("Text after the exercise.")]


def _markdown(source: str) -> dict:
    return _cell("markdown", source)


@pytest.fixture
def inputs(tmp_path: Path) -> coursepack.Inputs:
    portable = tmp_path / "portable"
    for edition in ("student", "instructor"):
        _notebook(portable / edition / "clones_amplification.ipynb", _chapter(edition))
        _notebook(portable / edition / "clones_checks.ipynb", [
            _markdown("# 8. Checks"),
            _cell("code", "%matplotlib inline\nimport dp_accounting\nimport math\n")])
    website = tmp_path / "html"
    (website / "_static").mkdir(parents=True)
    (website / "index.html").write_text("<html><body><p>The book</p></body></html>")
    (website / "_static" / "exercise.css").write_text(".solution { color: red }")
    wheel_dir = tmp_path / "dist"
    wheel_dir.mkdir()
    with zipfile.ZipFile(wheel_dir / "shuffle_lib-2.0.1-py3-none-any.whl", "w") as wheel:
        wheel.writestr("shuffle_lib/__init__.py", "__version__ = '2.0.1'\n")
        wheel.writestr("shuffle_lib/datasets.py", "def adult(n=None, rng=None):\n    pass\n")
        wheel.writestr("shuffle_lib/data/tenure.csv", "county,owned\nA,1\n")
        wheel.writestr("shuffle_lib/data/README.md", "# Data\nCC BY 4.0\n")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "requirements.lock").write_text(LOCK)
    pdf = tmp_path / "book.pdf"
    pdf.write_bytes(b"%PDF-1.4 the instructor edition")
    return coursepack.Inputs(portable, website, wheel_dir, tmp_path / "pyproject.toml",
                             tmp_path / "requirements.lock", instructor_pdf=pdf)


def test_pack_layout_zips_and_readmes(inputs: coursepack.Inputs, tmp_path: Path) -> None:
    out = tmp_path / "coursepack"
    problems, requirements = coursepack.build(inputs, out, distributions=DISTRIBUTIONS)
    assert problems == []
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"student/notebooks/clones_amplification.ipynb", "student/notebooks/clones_checks.ipynb",
            "instructor/notebooks/clones_amplification.ipynb", "instructor/book.pdf",
            "student/website/index.html",
            "wheel/shuffle_lib-2.0.1-py3-none-any.whl", "requirements.txt", "constraints.txt",
            "data/tenure.csv", "data/README.md", "README-students.md",
            "README-lecturers.md"} <= files
    students = (out / "README-students.md").read_text()
    for route in ("JupyterHub", "Colab", "VS Code", "On your computer"):
        assert route in students
    assert "!pip install -q shuffle_lib-2.0.1-py3-none-any.whl" in students
    assert "jupyterlab==4.6.6" in students
    lecturers = (out / "README-lecturers.md").read_text()
    assert "make coursepack" in lecturers and "--check" in lecturers
    assert "| `clones_amplification.ipynb` | `adult` |" in lecturers  # not `items`
    with zipfile.ZipFile(out.with_suffix(".zip")) as full:
        names = set(full.namelist())
    assert "coursepack/instructor/notebooks/clones_amplification.ipynb" in names
    with zipfile.ZipFile(tmp_path / "coursepack-student.zip") as student:
        names = set(student.namelist())
    assert "coursepack/student/notebooks/clones_amplification.ipynb" in names
    assert "coursepack/wheel/shuffle_lib-2.0.1-py3-none-any.whl" in names
    assert not [n for n in names if "instructor" in n or "lecturers" in n.lower()]
    assert requirements.problems == []


def test_requirements_come_from_the_lock_and_the_imports(inputs: coursepack.Inputs,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "coursepack"
    coursepack.build(inputs, out, distributions=DISTRIBUTIONS)
    lines = [line for line in (out / "requirements.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    pins = [line.split("  #")[0] for line in lines]
    # runtime dependencies, the kernel, and what the notebooks import (solutions included);
    # not jupyterlab (in the lock but not needed), not math (standard library)
    assert pins == ["cvxpy==1.9.3", "dp-accounting==0.6.0", "ipykernel==7.4.0", "numpy==2.4.6",
                    "pandas==3.1.1", "scikit-learn==1.9.1", "tqdm==4.70.1"]
    assert "shuffle_lib" in lines[0] and "notebooks" in lines[1]
    assert (out / "constraints.txt").read_text().endswith(LOCK)


def test_a_needed_package_missing_from_the_lock_is_an_error(tmp_path: Path) -> None:
    _notebook(tmp_path / "a.ipynb", [_cell("code", "import networkx as nx")])
    with pytest.raises(ValueError, match="networkx"):
        coursepack.derive_requirements([tmp_path / "a.ipynb"], [], coursepack.read_lock(LOCK),
                                       {"networkx": "networkx"})


def test_toolchain_imports_and_repository_paths_are_reported(tmp_path: Path) -> None:
    _notebook(tmp_path / "course.ipynb", [_cell("code", (
        "import sys\nfrom myst_nb import glue\nimport reading_path\n"
        "text = open('../book/intro.md').read()\nimport pandas as pd\n"
        "frame = pd.read_csv('https://example.org/x.csv')"))])
    found = coursepack.derive_requirements([tmp_path / "course.ipynb"], [],
                                           coursepack.read_lock(LOCK), DISTRIBUTIONS)
    assert any("myst_nb" in p for p in found.problems)
    assert any("reading_path" in p for p in found.problems)
    assert any("open('../book/intro.md')" in p for p in found.problems)
    assert len(found.problems) == 3
    assert not any("example.org" in p for p in found.problems)


EXPECTED = {"code": "clones_amplification.ipynb: solution line",
            "prose": "clones_amplification.ipynb: solution line",
            "details": "<details><summary>Solution", "tag": "tagged 'solution'",
            "marker": "contains solution-start", "website": "page.html: solution line"}


@pytest.mark.parametrize("leak", sorted(EXPECTED))
def test_the_check_catches_a_planted_solution(inputs: coursepack.Inputs, tmp_path: Path,
                                              leak: str) -> None:
    student = inputs.portable / "student" / "clones_amplification.ipynb"
    cells = json.loads(student.read_text())["cells"]
    if leak == "code":  # a solution's code line copied into a student cell
        cells.append(_cell("code", f"x = 1\n    {SOLUTION_CODE}  \n"))
    elif leak == "prose":
        cells.append(_markdown(f"Hint: {SOLUTION_PROSE}"))
    elif leak == "details":
        cells.append(_markdown("<details>\n  <summary>Solution</summary>\nsoon</details>"))
    elif leak == "tag":
        cells.append(_cell("code", "x = 1", tags=["solution"]))
    elif leak == "marker":
        cells.append(_markdown("```{solution-start} ex-one\n```"))
    else:  # the website shows the solution's code, split into highlighted spans
        words = SOLUTION_CODE.split(" ", 2)
        (inputs.website / "page.html").write_text(
            f"<pre><span>{words[0]}</span> <span>{words[1]}</span>&#32;{words[2]}</pre>")
    student.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                   "nbformat_minor": 5}))
    out = tmp_path / "coursepack"
    problems, _ = coursepack.build(inputs, out, distributions=DISTRIBUTIONS)
    assert len(problems) == 1 and EXPECTED[leak] in problems[0], problems
    assert not out.with_suffix(".zip").exists()  # no zip of a leaking pack
    assert coursepack.main(["--check", str(out), "--book", ""]) == 1


def test_shared_lines_and_an_empty_instructor_half(inputs: coursepack.Inputs,
                                                   tmp_path: Path) -> None:
    # SHARED_CODE is in a solution and also in the chapter: not a leak (the clean build above
    # already passes with it). Without any solution to look for, the check refuses to pass.
    out = tmp_path / "coursepack"
    coursepack.assemble(inputs, out, DISTRIBUTIONS)
    assert coursepack.check_pack(out) == []
    for notebook in (out / "instructor" / "notebooks").glob("*.ipynb"):
        notebook.write_text(json.dumps({"cells": [_markdown("# no solutions")]}))
    assert any("prove nothing" in p for p in coursepack.check_pack(out))


def test_solutions_are_also_taken_from_the_chapter_sources(inputs: coursepack.Inputs,
                                                           tmp_path: Path) -> None:
    book = tmp_path / "book"
    book.mkdir()
    (book / "chapter.md").write_text(
        "# A chapter\n\n```{solution-start} ex-one\n```\nText.\n\n```{code-cell} ipython3\n"
        "hidden = compute_the_whole_answer_for_the_students(eps0=1.0)\n```\n"
        "```{solution-end}\n```\n")
    out = tmp_path / "coursepack"
    coursepack.assemble(inputs, out, DISTRIBUTIONS)
    assert coursepack.check_pack(out, book) == []
    leaked = out / "student" / "notebooks" / "clones_checks.ipynb"
    leaked.write_text(json.dumps({"cells": [_cell(
        "code", "hidden = compute_the_whole_answer_for_the_students(eps0=1.0)")]}))
    assert coursepack.check_pack(out) == []  # not in the instructor notebooks ...
    assert coursepack.check_pack(out, book)  # ... but in the chapter's solution
