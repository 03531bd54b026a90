"""The book's chapters in JupyterLab as they read on the website: a Jupyter contents manager.

JupyterLab opens a chapter (``book/**/*.md``) through Jupytext and renders its markdown with
jupyterlab-myst. Three things the Sphinx build provides are missing there, and this contents
manager supplies them when a chapter is opened, and undoes them, exactly, when it is saved:

1. **Math macros** (``\\eps``, ``\\cR``, ``\\Hockey{..}``, ...). Their single definition stays in
   ``_config.yml`` (``sphinx.config.mathjax3_config.tex.macros``, read by Sphinx); here they are
   converted to MyST frontmatter (``math:``) at the top of the first markdown cell, which is where
   jupyterlab-myst reads a notebook's macros.
2. **Glued numbers.** ``{glue:text}`name:format``` becomes ``{eval}`glue_text("name:format")```,
   an inline expression that jupyterlab-myst evaluates in the kernel when the markdown cell is run
   (``glue_text`` comes from the kernel extension ``book_kernel.py``). Before the cell runs,
   the expression itself is shown as the placeholder.
3. **Collapsed solutions.** Markdown cells are split at the ``solution-start`` and
   ``solution-end`` markers, so that a solution's body sits in cells of its own (sphinx-exercise
   joins the markers across cells; jupyterlab-myst renders each cell alone). The body's text goes
   into a closed ``dropdown`` (a click opens it; running the cells leaves it closed, whereas
   JupyterLab shows a hidden markdown cell again when it runs), and its code cells are collapsed
   (``jupyter`` metadata ``source_hidden`` and ``outputs_hidden``; a click on the bar opens them).

Saving merges the split cells, removes the frontmatter, restores the roles and drops what
JupyterLab added (the evaluated expressions in ``user_expressions`` and the collapse flags), so a
chapter opened, run and saved is the notebook it was (``tests/test_lab_transforms.py``); when its
text would not change, the file is not written at all.
"""

from __future__ import annotations

import copy
import itertools
import re
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import yaml
from jupytext.async_contentsmanager import AsyncTextFileContentsManager

MARK = "book_lab"  # cell metadata: what to undo on save
FRONTMATTER_NOTE = "# math macros from _config.yml, added by JupyterLab; removed on save"
GLUE_ROLE = re.compile(r"\{glue:text\}`([^`\"]+)`")
GLUE_EVAL = re.compile(r"\{eval\}`glue_text\(\"([^`\"]+)\"\)`")
SOLUTION_START = re.compile(r"^```\{solution-start\}.*\n(?:.*\n)*?```[ \t]*(?:\n|$)", re.MULTILINE)
SOLUTION_END = re.compile(r"^```\{solution-end\}[ \t]*\n```[ \t]*(?:\n|$)", re.MULTILINE)
DROPDOWN_FENCE = ":" * 12  # longer than any fence inside a solution
JUPYTERLAB_KEYS = ("user_expressions",)  # jupyterlab-myst's evaluated expressions


def macros_from_config(config_path: Path) -> dict[str, str]:
    """The MathJax macros of the book's ``_config.yml`` as MyST frontmatter ``math`` entries:
    ``name: body`` becomes ``'\\name': body`` and ``name: [body, n]`` (n arguments) becomes
    ``'\\name': body`` (KaTeX counts ``#1``..``#n`` itself)."""
    config = yaml.safe_load(config_path.read_text())
    macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    converted = {}
    for name, body in macros.items():
        if isinstance(body, list):
            if len(body) != 2:
                raise ValueError(f"macro {name}: only [body, number of arguments] is supported")
            body = body[0]
        converted["\\" + name] = body
    return converted


def frontmatter(macros: dict[str, str]) -> str:
    """The YAML block put at the top of the first markdown cell."""
    return "---\n" + FRONTMATTER_NOTE + "\n" + yaml.safe_dump(
        {"math": macros}, sort_keys=False, allow_unicode=True) + "---\n"


def _split_points(source: str) -> list[int]:
    """Where a markdown cell is cut so that a solution's body sits in cells of its own: before and
    after each ``solution-start`` block and each ``solution-end`` block."""
    points = set()
    for pattern in (SOLUTION_START, SOLUTION_END):
        for match in pattern.finditer(source):
            points.update((match.start(), match.end()))
    return sorted(p for p in points if 0 < p < len(source))


def to_lab(notebook: dict[str, Any], macros: dict[str, str]) -> dict[str, Any]:
    """The chapter as JupyterLab shows it (a new notebook dict; the input is not changed)."""
    notebook = copy.deepcopy(notebook)
    cells: list[dict[str, Any]] = []
    in_solution = False
    body_pieces = 0  # markdown pieces of the current solution's body so far
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            cells.append(_collapse(cell) if in_solution else cell)
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        bounds = [0, *_split_points(source), len(source)]
        for k, (start, end) in enumerate(itertools.pairwise(bounds)):
            piece = copy.deepcopy(cell)
            piece["source"] = GLUE_ROLE.sub(r'{eval}`glue_text("\1")`', source[start:end])
            if k:
                piece["metadata"] = {MARK: {"continues": True}}
                if "id" in cell:
                    piece["id"] = f"{cell['id']}-{k}"
            if SOLUTION_START.match(source, start):
                in_solution, body_pieces = True, 0
            elif SOLUTION_END.match(source, start):
                in_solution = False
            elif in_solution and piece["source"].strip():
                body_pieces += 1
                _fold(piece, "Solution" if body_pieces == 1 else "Solution (continued)")
            cells.append(piece)
    first_markdown = next((c for c in cells if c["cell_type"] == "markdown"), None)
    if first_markdown is not None and macros:
        first_markdown["source"] = frontmatter(macros) + first_markdown["source"]
        first_markdown["metadata"].setdefault(MARK, {})["frontmatter"] = True
    notebook["cells"] = cells
    return notebook


def _fold(piece: dict[str, Any], title: str) -> None:
    """Put a markdown piece of a solution's body into a closed dropdown (in place)."""
    body = piece["source"]
    prefix = f"{DROPDOWN_FENCE}{{dropdown}} {title}\n"
    suffix = ("" if body.endswith("\n") else "\n") + DROPDOWN_FENCE + "\n"
    piece["source"] = prefix + body + suffix
    piece["metadata"].setdefault(MARK, {})["dropdown"] = [prefix, suffix]


def _collapse(cell: dict[str, Any]) -> dict[str, Any]:
    """Collapse a code cell of a solution's body (unless it sets its own ``jupyter`` view)."""
    if "jupyter" in cell["metadata"]:
        return cell
    cell = copy.deepcopy(cell)
    view = {"source_hidden": True, "outputs_hidden": True} if cell["cell_type"] == "code" else {
        "source_hidden": True}
    cell["metadata"]["jupyter"] = view
    cell["metadata"].setdefault(MARK, {})["collapsed"] = True
    return cell


def from_lab(notebook: dict[str, Any]) -> dict[str, Any]:
    """The chapter as it is stored: undoes :func:`to_lab` and drops what JupyterLab added."""
    notebook = copy.deepcopy(notebook)
    cells: list[dict[str, Any]] = []
    for cell in notebook["cells"]:
        metadata = cell["metadata"]
        mark = metadata.pop(MARK, {})
        for key in JUPYTERLAB_KEYS:
            metadata.pop(key, None)
        if mark.get("collapsed"):
            metadata.pop("jupyter", None)  # opened or not, the view is not stored
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if mark.get("frontmatter"):
                source = _strip_frontmatter(source)
            if mark.get("dropdown"):
                prefix, suffix = mark["dropdown"]
                if source.startswith(prefix) and source.endswith(suffix):
                    source = source[len(prefix):len(source) - len(suffix)]
            cell["source"] = GLUE_EVAL.sub(r"{glue:text}`\1`", source)
            if mark.get("continues") and cells and cells[-1]["cell_type"] == "markdown":
                cells[-1]["source"] += cell["source"]
                continue
        cells.append(cell)
    notebook["cells"] = cells
    return notebook


def _strip_frontmatter(source: str) -> str:
    """Remove the leading ``---`` block that carries :data:`FRONTMATTER_NOTE`."""
    match = re.match(r"---\n" + re.escape(FRONTMATTER_NOTE) + r"\n(?:.*\n)*?---\n", source)
    return source[match.end():] if match else source


def _is_chapter(path: str) -> bool:
    return path.endswith(".md")


class BookContentsManager(AsyncTextFileContentsManager):
    """Jupytext's contents manager with :func:`to_lab` on open and :func:`from_lab` on save for
    the book's markdown notebooks (``make lab`` configures the server to use it)."""

    def _macros(self) -> dict[str, str]:
        config = Path(self.root_dir) / "_config.yml"
        return macros_from_config(config) if config.is_file() else {}

    async def get(self, path: str, content: bool = True, type: str | None = None,
                  format: str | None = None, **kwargs: Any) -> dict[str, Any]:
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if content and model.get("type") == "notebook" and _is_chapter(path):
            model["content"] = type_notebook(to_lab(model["content"], self._macros()))
        return model

    async def save(self, model: dict[str, Any], path: str = "") -> dict[str, Any]:
        """Save with :func:`from_lab`; a chapter whose text would not change is not written at
        all. Jupytext re-serializes cell metadata in its own YAML style (the figure captions), so
        an autosave of a chapter that was only read or run would otherwise rewrite the file."""
        if model.get("type") == "notebook" and model.get("content") and _is_chapter(path):
            model = {**model, "content": type_notebook(from_lab(model["content"]))}
            if self._unchanged(model["content"], path):
                return await self.get(path, content=False)
        return await super().save(model, path)

    def _unchanged(self, notebook: Any, path: str) -> bool:
        os_path = Path(self._get_os_path(path))
        if not os_path.is_file():
            return False
        stored = jupytext.reads(os_path.read_text(encoding="utf-8"), fmt="md:myst")
        return jupytext.writes(notebook, fmt="md:myst") == jupytext.writes(stored, fmt="md:myst")


def type_notebook(notebook: dict[str, Any]) -> Any:
    """A plain dict back to the ``NotebookNode`` Jupyter's server expects."""
    return nbformat.from_dict(notebook)
