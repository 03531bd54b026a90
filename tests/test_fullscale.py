"""The notebook surgery of tools/fullscale.py (``make fullscale``), on tiny synthetic notebooks.

Nothing here starts a kernel or runs a chapter.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from project_tools import load_tool

ROOT = Path(__file__).resolve().parents[1]
fullscale = load_tool("fullscale")


def _notebook(*cells) -> nbformat.NotebookNode:
    return new_notebook(cells=list(cells))


def _paper(source: str) -> nbformat.NotebookNode:
    return new_code_cell(source, metadata={"tags": ["skip-execution"]})


def test_override_cell_is_dropped_and_tag_removed() -> None:
    nb = _notebook(
        new_code_cell("import math"),
        _paper("N, TRIALS = 20_000, 10  # the paper"),
        new_code_cell("# website\nN, TRIALS = 2_000, 2"),
        new_markdown_cell("text"),
        new_code_cell("result = N * TRIALS"),
        new_code_cell("glue('n', N)"),
    )
    plan = fullscale.paper_scale_notebook(nb)
    sources = [cell.source for cell in plan.notebook.cells]
    assert "# website\nN, TRIALS = 2_000, 2" not in sources
    assert len(plan.notebook.cells) == len(nb.cells) - 1
    paper = plan.notebook.cells[1]
    assert paper.source.startswith("N, TRIALS = 20_000")
    assert "skip-execution" not in paper.metadata["tags"]
    assert not any("skip-execution" in cell.metadata.get("tags", [])
                   for cell in plan.notebook.cells)
    assert plan.paper_cells == [1] and plan.paper_names == ["N", "TRIALS"]
    assert plan.consumers == [3, 4]  # indices in the new notebook; the markdown cell is skipped
    assert plan.first_work == 3  # the glue-only cell does no work
    # the input notebook is not modified
    assert "skip-execution" in nb.cells[1].metadata["tags"] and len(nb.cells) == 6


def test_other_definitions_in_the_override_cell_are_kept() -> None:
    nb = _notebook(
        _paper("REPS = 1_000\nGRID = (1, 2, 3)"),
        new_code_cell("REPS = 150\nDELTA = 1e-6\nGRID = (\n    1,\n    2,\n)\n\n\n"
                      "def f():\n    return REPS\n"),
        new_code_cell("f()"),
    )
    plan = fullscale.paper_scale_notebook(nb)
    override = plan.notebook.cells[1]
    assert "REPS = 150" not in override.source and "GRID = (" not in override.source
    assert "DELTA = 1e-6" in override.source and "def f():" in override.source
    assert "fullscale-website-override" in override.metadata["tags"]
    compile(override.source, "override", "exec")
    namespace: dict = {}
    for cell in plan.notebook.cells[:2]:
        exec(cell.source, namespace)  # the synthetic cells above
    assert namespace["REPS"] == 1_000 and namespace["GRID"] == (1, 2, 3)
    assert namespace["DELTA"] == 1e-6 and namespace["f"]() == 1_000


def test_paper_only_names_are_reported() -> None:
    nb = _notebook(_paper("N = 10\nDELTA = 1e-6"), new_code_cell("N = 2"), new_code_cell("N"))
    plan = fullscale.paper_scale_notebook(nb)
    assert len(plan.notebook.cells) == 2
    assert any("DELTA" in action for action in plan.override_actions)


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ((new_code_cell("N = 1"),), "no code cell is tagged"),
        ((_paper("N = 10"),), "not followed by a code cell"),
        ((_paper("N = 10"), new_markdown_cell("x"), new_code_cell("N = 1")),
         "not followed by a code cell"),
        ((_paper("N = 10"), new_code_cell("M = 1")), "assigns none of"),
        ((_paper("N = 10"), new_code_cell("N, M = 1, 2")), "together with"),
        ((_paper("print(1)"), new_code_cell("N = 1")), "assigns no name"),
    ],
)
def test_unpairable_chapters_are_errors(cells, message) -> None:
    with pytest.raises(fullscale.SurgeryError, match=message):
        fullscale.paper_scale_notebook(_notebook(*cells))


def test_every_chapter_with_a_paper_cell_pairs() -> None:
    chapters = fullscale.chapters_with_paper_cells()
    assert chapters
    for path in chapters:
        plan = fullscale.paper_scale_notebook(fullscale.read_chapter(path))
        assert plan.paper_cells and plan.consumers, path


def test_reporting_calls_are_not_work() -> None:
    names = {"N"}
    assert not fullscale._does_work_with("glue('n', N, display=False)\nprint(N)", names)
    assert fullscale._does_work_with("data = make(N)", names)
    assert fullscale._does_work_with("glue('x', f(N))\ny = N + 1", names)
    assert not fullscale._does_work_with("M = 3", names)
