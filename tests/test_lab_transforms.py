"""The chapters' JupyterLab view (tools/jupyterlab): exact round trips and what each transform
promises. The browser test (``test_lab_browser.py``) checks the rendering itself."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import shutil
import sys
from pathlib import Path

import jupytext
import myst_nb
import pytest
import yaml
from myst_nb.core.variables import format_plain_text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "jupyterlab"))
import book_contents  # noqa: E402
import book_kernel  # noqa: E402

CHAPTERS = sorted(p for p in (ROOT / "book").rglob("*.md")
                  if p.read_text().startswith("---") and "kernelspec:" in p.read_text()[:600])
MACROS = book_contents.macros_from_config(ROOT / "_config.yml")


def _markdown(cells: list) -> list[str]:
    return [c["source"] for c in cells if c["cell_type"] == "markdown"]


@pytest.fixture(scope="module", params=CHAPTERS, ids=lambda p: p.relative_to(ROOT).as_posix())
def chapter(request: pytest.FixtureRequest) -> tuple:
    notebook = jupytext.read(request.param)
    return notebook, book_contents.to_lab(notebook, MACROS)


def test_every_chapter_survives_the_round_trip_exactly(chapter: tuple) -> None:
    notebook, lab_view = chapter
    assert lab_view != notebook
    assert book_contents.from_lab(lab_view) == notebook


def test_what_jupyterlab_adds_is_dropped_on_save(chapter: tuple) -> None:
    notebook, lab_view = chapter
    edited = copy.deepcopy(lab_view)
    for cell in edited["cells"]:
        if cell["cell_type"] == "markdown" and "glue_text(" in cell["source"]:
            cell["metadata"]["user_expressions"] = [{"expression": "glue_text('x')", "result": {}}]
        if cell["metadata"].get("jupyter") and cell["cell_type"] == "code":
            del cell["metadata"]["jupyter"]  # the student opened a collapsed solution cell
    assert book_contents.from_lab(edited) == notebook


def test_glue_roles_become_inline_expressions(chapter: tuple) -> None:
    notebook, lab_view = chapter
    roles = sum(len(book_contents.GLUE_ROLE.findall(s)) for s in _markdown(notebook["cells"]))
    lab_markdown = _markdown(lab_view["cells"])
    assert not any("{glue:text}" in s for s in lab_markdown)
    assert sum(len(book_contents.GLUE_EVAL.findall(s)) for s in lab_markdown) == roles


def test_macros_lead_the_first_markdown_cell(chapter: tuple) -> None:
    _, lab_view = chapter
    first = _markdown(lab_view["cells"])[0]
    block = re.match(r"---\n(.*?)---\n", first, re.DOTALL)
    assert block is not None
    assert yaml.safe_load(block.group(1)) == {"math": MACROS}


def test_every_solution_is_folded(chapter: tuple) -> None:
    """Between the start and end markers: markdown text in a closed dropdown, code collapsed;
    outside them nothing is folded."""
    _, lab_view = chapter
    inside, folded_solutions, solutions = False, 0, 0
    for cell in lab_view["cells"]:
        source = cell["source"]
        if cell["cell_type"] == "markdown" and source.startswith("```{solution-start}"):
            inside, solutions, counted = True, solutions + 1, False
            continue
        if cell["cell_type"] == "markdown" and source.startswith("```{solution-end}"):
            inside = False
            continue
        folded = ("jupyter" in cell["metadata"] if cell["cell_type"] == "code"
                  else source.startswith(book_contents.DROPDOWN_FENCE + "{dropdown} Solution"))
        if inside and source.strip():
            assert folded, source[:200]
            if not counted:
                folded_solutions, counted = folded_solutions + 1, True
        elif not inside:
            assert not folded, source[:200]
    assert folded_solutions == solutions
    if solutions == 0 and "exercise-start" not in json.dumps(lab_view["cells"]):
        return  # a page without exercises (the course page)
    assert solutions >= 5


def test_macros_match_the_sphinx_configuration() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    sphinx_macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    assert set(MACROS) == {"\\" + name for name in sphinx_macros}
    assert MACROS["\\eps"] == sphinx_macros["eps"]
    assert MACROS["\\Hockey"] == sphinx_macros["Hockey"][0]



def test_macros_with_optional_arguments_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "_config.yml"
    config.write_text(yaml.safe_dump({"sphinx": {"config": {"mathjax3_config": {
        "tex": {"macros": {"x": ["#1", 1, "default"]}}}}}}))
    with pytest.raises(ValueError, match="only"):
        book_contents.macros_from_config(config)


def test_glue_text_formats_as_the_website(monkeypatch: pytest.MonkeyPatch) -> None:
    shell = type("Shell", (), {"user_ns": {}})()
    monkeypatch.setattr(myst_nb, "glue", myst_nb.glue)  # restored after the test
    monkeypatch.setattr(book_kernel, "_glued_text", {})
    book_kernel.load_ipython_extension(shell)
    glue_text = shell.user_ns["glue_text"]
    assert repr(glue_text("ratio:.2f")) == book_kernel.PLACEHOLDER
    values = {"ratio": 0.123456, "count": 12, "share": 0.25, "label": "GSPA", "big": 2.5e-14}
    for name, value in values.items():
        myst_nb.glue(name, value, display=False)
    for key in ("ratio:.2f", "count:d", "count", "share:.0%", "label", "label:s", "big:.1e",
                "ratio"):
        name, _, spec = key.rpartition(":") if ":" in key else (key, "", "s")
        text = format_plain_text(repr(values[name]), spec)
        assert repr(glue_text(key)) == text


def test_contents_manager_leaves_an_unchanged_chapter_untouched(tmp_path: Path) -> None:
    """Open, then save unchanged: no write at all (Jupytext would restyle the captions' YAML);
    save an edit: written, and the edit is all that changed."""
    chapter = ROOT / "book" / "foundations" / "zcdp.md"
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    shutil.copy(chapter, tmp_path / "zcdp.md")
    manager = book_contents.BookContentsManager(root_dir=str(tmp_path))

    async def open_and_save(edit: bool) -> None:
        model = await manager.get("zcdp.md", type="notebook")
        cells = model["content"]["cells"]
        assert "glue_text(" in "".join(_markdown(cells))
        if edit:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": "A student's note.",
                          "id": "student-note"})
        await manager.save({"type": "notebook", "format": "json",
                            "content": model["content"]}, "zcdp.md")

    before = (tmp_path / "zcdp.md").read_bytes()
    mtime = (tmp_path / "zcdp.md").stat().st_mtime_ns
    asyncio.run(open_and_save(edit=False))
    assert (tmp_path / "zcdp.md").read_bytes() == before
    assert (tmp_path / "zcdp.md").stat().st_mtime_ns == mtime
    asyncio.run(open_and_save(edit=True))
    saved = jupytext.read(tmp_path / "zcdp.md")
    assert saved.cells[-1].source == "A student's note."
    saved.cells.pop()
    def strip_ids(cells: list) -> list:  # Jupytext draws new cell ids at every read
        return [{k: v for k, v in cell.items() if k != "id"} for cell in cells]

    assert strip_ids(saved.cells) == strip_ids(jupytext.read(chapter).cells)
