"""Portable notebooks: each chapter as an ``.ipynb`` that renders and runs in any Jupyter client.

The chapters are MyST-markdown notebooks; outside our build (plain JupyterLab or Notebook 7,
VS Code, Colab, nbviewer, GitHub) their directives, roles and macros show as raw text. This tool
writes every chapter of ``_toc.yml`` as a notebook in plain CommonMark plus ``$...$`` math, in an
instructor edition (each solution after its exercise, folded in ``<details>``) and a student
edition (solutions removed with ``student_edition.strip_solutions``):

- MathJax macros of ``_config.yml`` are expanded in place, arguments included;
- ``prf:`` blocks, admonitions, exercises, tables and figure captions become headed blocks with
  the numbers the website shows (read from the built HTML, not recomputed);
- glued values come from the build's executed notebooks (``*.glue.json`` or the outputs'
  ``scrapbook`` metadata), formatted as MyST-NB formats them;
- references and citations become links into the website (``--base-url``, relative by default);
- ``from myst_nb import glue`` becomes a small shim in the first code cell.

It needs the built book (``make book``): ``python tools/portable_notebooks.py [--base-url URL]
[--out DIR]`` writes ``<out>/{instructor,student}/<part>_<chapter>.ipynb`` (default out:
``_build/portable``) and lists the chapters whose code reads files by a repository path.

Not handled yet (each raises rather than leaving raw MyST): ``{glue:figure}`` and other glue
directives, glue from another notebook (``doc::key``), ``{doc}`` with a relative path, and
directives the chapters do not use (``{figure}``, ``{image}``, ``{code-block}`` ...). The
notebooks are written unexecuted; a figure's caption sits under the cell that draws it.
"""

from __future__ import annotations

import argparse
import copy
import html
import importlib.util
import itertools
import json
import posixpath
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
EDITIONS = ("instructor", "student")
DEFAULT_BASE_URL = "../html/"
BIBLIOGRAPHY_PAGE = "book/back/bibliography.html"


def _load_tool(name: str, path: Path) -> ModuleType:
    """Import a sibling tool by path (the tools are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


student_edition = _load_tool("student_edition", Path(__file__).with_name("student_edition.py"))
book_contents = _load_tool("book_contents",
                           Path(__file__).parent / "jupyterlab" / "book_contents.py")


# ---------------------------------------------------------------------------------------------
# Data the renderer needs (read from the built book, or given by tests)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Macro:
    """A MathJax macro: its body and its number of arguments (``#1`` .. ``#n``)."""

    body: str
    nargs: int = 0


@dataclass(frozen=True)
class Target:
    """Where a label lives on the website and how the website names it."""

    page: str  # HTML page relative to the site root, e.g. "book/clones/amplification.html"
    anchor: str  # id on that page ("" for the page itself)
    title: str | None = None  # section title or caption (what {ref} shows for sections)
    number: str | None = None  # "Theorem 6.1", "Fig. 6.2", "Exercise 6.1", "Table 4.1"
    chapter: str | None = None  # "Chapter 6" when the label names a numbered chapter


@dataclass(frozen=True)
class Citation:
    """One bibliography entry: surnames, year and its anchor on the bibliography page."""

    surnames: tuple[str, ...]
    year: str
    anchor: str = ""


@dataclass
class Context:
    """Everything needed to render one chapter."""

    macros: dict[str, Macro] = field(default_factory=dict)
    targets: dict[str, Target] = field(default_factory=dict)
    citations: dict[str, Citation] = field(default_factory=dict)
    glue: dict[str, str] = field(default_factory=dict)  # name -> text/plain
    blocks: dict[str, list[str]] = field(default_factory=dict)  # kind -> numbers, page order
    chapter_number: str | None = None  # "6" for the chapter's title
    base_url: str = DEFAULT_BASE_URL

    def next_number(self, kind: str) -> str | None:
        """The website's number of the next ``kind`` block (theorem, exercise, ...) of the page."""
        queue = self.blocks.get(kind)
        return queue.pop(0) if queue else None


# ---------------------------------------------------------------------------------------------
# Macros
# ---------------------------------------------------------------------------------------------

def load_macros(config_path: Path) -> dict[str, Macro]:
    """The MathJax macros of ``_config.yml`` (``name: body`` or ``name: [body, nargs]``)."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    table = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    macros = {}
    for name, body in table.items():
        if isinstance(body, list):
            if len(body) != 2:
                raise ValueError(f"macro {name}: only [body, number of arguments] is supported")
            macros[name] = Macro(str(body[0]), int(body[1]))
        else:
            macros[name] = Macro(str(body))
    return macros


def _read_argument(text: str, start: int) -> tuple[str, int]:
    """One TeX argument at ``start`` (after spaces): a balanced ``{...}`` group (without its
    braces), a control word, or one character; returns it and the index after it."""
    pos = start
    while pos < len(text) and text[pos] in " \t\n":
        pos += 1
    if pos >= len(text):
        raise ValueError(f"macro argument missing at the end of {text!r}")
    if text[pos] == "{":
        depth, end = 0, pos
        while end < len(text):
            char = text[end]
            if char == "\\":
                end += 2
                continue
            depth += {"{": 1, "}": -1}.get(char, 0)
            if depth == 0:
                return text[pos + 1:end], end + 1
            end += 1
        raise ValueError(f"unbalanced braces in a macro argument: {text[start:start + 60]!r}")
    word = re.match(r"\\[A-Za-z]+|\\.|.", text[pos:], re.DOTALL)
    return word.group(0), pos + len(word.group(0))


def expand_macros(text: str, macros: dict[str, Macro], depth: int = 0) -> str:
    """``text`` with every macro of ``macros`` replaced by its body, arguments substituted
    (``\\Hockey{\\eps}`` -> ``H_{e^{\\varepsilon}}``); bodies and arguments are expanded too."""
    if depth > 20:
        raise ValueError("macro expansion does not terminate")
    if not macros:
        return text
    names = "|".join(sorted(map(re.escape, macros), key=len, reverse=True))
    pattern = re.compile(r"\\(" + names + r")(?![A-Za-z])")
    out, pos = [], 0
    for match in pattern.finditer(text):
        if match.start() < pos:  # inside an argument already consumed
            continue
        macro = macros[match.group(1)]
        body, end = macro.body, match.end()
        for k in range(1, macro.nargs + 1):
            argument, end = _read_argument(text, end)
            body = body.replace(f"#{k}", expand_macros(argument, macros, depth + 1))
        body = expand_macros(body, macros, depth + 1)
        if re.match(r"[A-Za-z]", text[end:end + 1]) and re.search(r"\\[A-Za-z]+$", body):
            body += " "  # keep "\varepsilon" from running into a following letter
        out.append(text[pos:match.start()] + body)
        pos = end
    out.append(text[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Inline roles
# ---------------------------------------------------------------------------------------------

ROLE = re.compile(r"\{([a-z]+(?::[a-z]+)?)\}`([^`]*)`")
EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.DOTALL)
LABEL_LINE = re.compile(r"^\(([^()\s]+)\)=[ \t]*$", re.MULTILINE)


def format_glue(text: str, fmt_spec: str) -> str:
    """A glued ``text/plain`` value formatted as MyST-NB's ``{glue:text}`` does."""
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(text, fmt_spec)


def _link(text: str, target: Target, ctx: Context) -> str:
    url = ctx.base_url + target.page + (f"#{target.anchor}" if target.anchor else "")
    return f"[{text}]({url})"


def _target(label: str, ctx: Context) -> Target:
    try:
        return ctx.targets[label]
    except KeyError:
        raise KeyError(f"label {label!r} not found on the website (is the book built?)") from None


def render_reference(role: str, content: str, ctx: Context, before: str = "") -> str:
    """``{ref}``, ``{prf:ref}``, ``{numref}`` or ``{doc}`` as a link named as on the website;
    ``before`` is the text preceding the role (a chapter after "the chapter" keeps its title)."""
    explicit = EXPLICIT.match(content)
    label = explicit.group(2) if explicit else content
    if role == "doc":
        label = posixpath.normpath(label).lstrip("/")
    target = _target(label.strip(), ctx)
    if explicit and explicit.group(1):
        text = explicit.group(1)
        if role == "numref" and target.number:
            text = text.replace("%s", target.number.split()[-1])
        return _link(text, target, ctx)
    if role in ("prf:ref", "numref") or (role == "ref" and target.number and not (
            target.number.startswith(("Fig.", "Table")) and target.title)):
        text = target.number or target.title or label
    elif target.chapter and not re.search(r"chapter\s*$", before, re.IGNORECASE):
        text = target.chapter
    else:
        text = target.title or target.number or label
    return _link(text, target, ctx)


def render_citation(role: str, content: str, ctx: Context) -> str:
    """``{cite:t}`` as "Feldman et al. (2021)", ``{cite:p}`` as "(Feldman et al., 2021)",
    each linked to its entry on the bibliography page."""
    keys = [key.strip() for key in content.split(",") if key.strip()]
    parts = []
    for key in keys:
        if key not in ctx.citations:
            raise KeyError(f"citation key {key!r} not in the bibliography")
        entry = ctx.citations[key]
        names = _author_names(entry.surnames)
        target = Target(BIBLIOGRAPHY_PAGE, entry.anchor)
        text = f"{names} ({entry.year})" if role == "cite:t" else f"{names}, {entry.year}"
        parts.append(_link(text, target, ctx))
    if role == "cite:t":
        return ", ".join(parts)
    return "(" + "; ".join(parts) + ")"


def _author_names(surnames: tuple[str, ...]) -> str:
    if len(surnames) == 1:
        return surnames[0]
    if len(surnames) == 2:
        return f"{surnames[0]} and {surnames[1]}"
    return f"{surnames[0]} et al."


def render_glue(content: str, ctx: Context) -> str:
    """``{glue:text}`` ``name:format`` as its value from the build."""
    if "::" in content:
        raise ValueError(f"glue from another notebook is not supported: {content!r}")
    name, _, fmt_spec = content.partition(":")
    if name not in ctx.glue:
        raise KeyError(f"glued value {name!r} not found in the executed notebook")
    value = format_glue(ctx.glue[name], fmt_spec)
    return re.sub(r"([*_<>\[\]`])", r"\\\1", value)


def render_roles(text: str, ctx: Context) -> str:
    """Every MyST role of ``text`` in plain markdown."""
    def replace(match: re.Match[str]) -> str:
        role, content = match.group(1), match.group(2)
        if role in ("glue", "glue:text", "glue:"):
            return render_glue(content, ctx)
        if role in ("ref", "prf:ref", "numref", "doc"):
            return render_reference(role, content, ctx, text[max(0, match.start() - 20):
                                                             match.start()])
        if role in ("cite", "cite:p", "cite:t", "cite:ps", "cite:ts"):
            return render_citation("cite:t" if role.startswith("cite:t") else "cite:p",
                                   content, ctx)
        if role == "math":
            return f"${content}$"
        raise ValueError(f"unsupported role {{{role}}}")

    return ROLE.sub(replace, text)


MATH = re.compile(r"\$\$.*?\$\$|\$(?:[^$\n]|\n(?![ \t]*\n))+?\$", re.DOTALL)
LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")


def render_inline(text: str, ctx: Context) -> str:
    """Roles, labels and macros of a piece of markdown outside code fences. Inside math a role
    becomes its text without a link (a markdown link there would show as raw text)."""
    text = LABEL_LINE.sub(lambda m: f'<a id="{m.group(1)}"></a>\n', text)
    out, pos = [], 0
    for math in MATH.finditer(text):
        out.append(render_roles(text[pos:math.start()], ctx))
        out.append(LINK.sub(r"\1", render_roles(math.group(0), ctx)))
        pos = math.end()
    out.append(render_roles(text[pos:], ctx))
    return expand_macros("".join(out), ctx.macros)


# ---------------------------------------------------------------------------------------------
# Block directives
# ---------------------------------------------------------------------------------------------

FENCE = re.compile(r"^([ \t]*)(`{3,}|:{3,})(.*)$")
DIRECTIVE = re.compile(r"^\{([\w:-]+)\}[ \t]*(.*)$")
ADMONITIONS = {"note", "tip", "important", "warning", "caution", "attention", "danger", "error",
               "hint", "seealso"}


def _closing(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing the fence opened at ``start`` (CommonMark: the same character,
    at least as long, nothing else on the line)."""
    close = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
    for k in range(start + 1, len(lines)):
        if close.match(lines[k]):
            return k
    raise ValueError(f"unclosed fence {lines[start]!r}")


def _options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's options (``:key: value`` lines or a ``---`` YAML block) and the rest."""
    if body and body[0].strip() == "---":
        end = body.index("---", 1) if "---" in body[1:] else None
        if end is None:
            raise ValueError("unclosed YAML options block")
        options = yaml.safe_load("\n".join(body[1:end])) or {}
        return {k: str(v) for k, v in options.items()}, body[end + 1:]
    options, k = {}, 0
    while k < len(body) and (option := re.match(r"^:([\w-]+):[ \t]*(.*)$", body[k])):
        options[option.group(1)] = option.group(2).strip()
        k += 1
    return options, body[k:]


def render_markdown(text: str, ctx: Context) -> str:
    """A MyST markdown text as plain CommonMark: directives rendered, code fences kept as they
    are, roles, labels and macros everywhere else."""
    lines = text.split("\n")
    out: list[str] = []
    plain: list[str] = []
    k = 0
    while k < len(lines):
        fence = FENCE.match(lines[k])
        if not fence:
            plain.append(lines[k])
            k += 1
            continue
        out.append(render_inline("\n".join(plain), ctx))
        plain = []
        end = _closing(lines, k, fence.group(2))
        directive = DIRECTIVE.match(fence.group(3).strip())
        if directive:
            options, body = _options(lines[k + 1:end])
            out.append(render_directive(directive.group(1), directive.group(2).strip(),
                                        options, "\n".join(body), ctx))
        else:
            out.append("\n".join(lines[k:end + 1]))
        k = end + 1
    out.append(render_inline("\n".join(plain), ctx))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def _anchor(options: dict[str, str]) -> str:
    label = options.get("label") or options.get("name")
    return f'<a id="{label}"></a>\n\n' if label else ""


def _heading(kind: str, fallback: str, title: str, options: dict[str, str],
             ctx: Context) -> str:
    """"**Theorem 6.1** (Title)." with the website's number of the page's next ``kind`` block
    (checked against the number the website gives the block's label, when it has one)."""
    number = ctx.next_number(kind)
    label = options.get("label", "")
    if label in ctx.targets and ctx.targets[label].number not in (None, number):
        raise ValueError(f"{label}: the website numbers it {ctx.targets[label].number}, "
                         f"but it is the page's {kind} numbered {number}")
    head = f"**{number or fallback}**"
    return head + f" ({render_inline(title, ctx)})." if title else head


def _details(summary: str, body: str) -> str:
    return f"<details>\n<summary>{summary}</summary>\n\n{body.strip()}\n\n</details>\n"


def render_directive(name: str, argument: str, options: dict[str, str], body: str,
                     ctx: Context) -> str:
    """One directive (its body rendered recursively) as plain markdown."""
    inner = render_markdown(body, ctx).strip()
    if name.startswith("prf:"):
        kind = name[4:]
        if kind == "proof":
            return f"\n*Proof.* {inner} ∎\n"
        head = _heading(kind, kind.capitalize(), argument, options, ctx)
        return f"\n{_anchor(options)}{head}\n\n{inner}\n"
    if name in ("exercise-start", "exercise"):
        head = _heading("exercise", "Exercise", argument, options, ctx)
        return f"\n{_anchor(options)}{head}\n\n{inner}\n"
    if name == "exercise-end":
        return ""
    if name in ("solution-start", "solution-end", "solution"):
        raise ValueError(f"{{{name}}} must be handled at the cell level")
    if name in ("admonition", "dropdown") or name in ADMONITIONS:
        title = render_inline(argument, ctx) if argument else name.capitalize()
        if name == "dropdown" or "dropdown" in options.get("class", "").split():
            return "\n" + _anchor(options) + _details(title, inner)
        return f"\n{_anchor(options)}**{title}**\n\n{inner}\n"
    if name == "table":
        number = ctx.targets.get(options.get("name", ""), Target("", "")).number or "Table"
        return f"\n{_anchor(options)}**{number}** {render_inline(argument, ctx)}\n\n{inner}\n"
    if name == "list-table":
        number = ctx.targets.get(options.get("name", ""), Target("", "")).number or "Table"
        table = list_table(body, int(options.get("header-rows", "0") or 0))
        caption = f"**{number}** {render_inline(argument, ctx)}\n\n" if argument else ""
        return f"\n{_anchor(options)}{caption}{render_inline(table, ctx)}\n"
    if name in ("math", "equation"):
        return f"\n{_anchor(options)}$$\n{expand_macros(body.strip(), ctx.macros)}\n$$\n"
    raise ValueError(f"unsupported directive {{{name}}}")


def list_table(body: str, header_rows: int) -> str:
    """A ``list-table`` body (``* - a`` rows, ``  - b`` cells) as a pipe table."""
    rows: list[list[str]] = []
    for line in body.split("\n"):
        if re.match(r"^\* - ", line):
            rows.append([line[4:].strip()])
        elif re.match(r"^  - ", line) and rows:
            rows[-1].append(line[4:].strip())
        elif line.strip() and rows:
            rows[-1][-1] += " " + line.strip()
    if not rows:
        raise ValueError("empty list-table")
    cells = [[cell.replace("|", "\\|") for cell in row] for row in rows]
    header = cells[0] if header_rows else [""] * len(cells[0])
    data = cells[1:] if header_rows else cells
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in data]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Cells
# ---------------------------------------------------------------------------------------------

GLUE_IMPORT = re.compile(r"^from myst_nb import glue[ \t]*\n?", re.MULTILINE)
GLUE_SHIM = '''\
def glue(name, value, display=True):
    """Show the value (in the book, glue also records it for the text; here it does not)."""
    if display:
        from IPython.display import display as show

        show(value)


'''
SOLUTION_LABEL = re.compile(r"^```\{solution-start\}[ \t]*(\S*)")
REPOSITORY_PATH = re.compile(r"""Path\(\s*["']\.|["']\.\./|__file__|sys\.path|os\.chdir""")


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def _markdown(text: str) -> dict[str, Any]:
    return nbformat.v4.new_markdown_cell(text.strip() + "\n")


def _solution_summary(label: str, ctx: Context, continued: bool) -> str:
    number = ctx.targets[label].number if label in ctx.targets else None
    summary = f"Solution to {number}" if number else "Solution"
    return summary + (" (continued)" if continued else "")


def convert_cells(cells: list[dict[str, Any]], ctx: Context) -> list[dict[str, Any]]:
    """The chapter's cells in plain markdown; a solution's text goes into ``<details>`` blocks,
    its code cells stay (tagged ``solution``) right after."""
    out: list[dict[str, Any]] = []
    solution: str | None = None  # label of the exercise whose solution is open
    pieces = 0
    for cell in cells:
        if cell["cell_type"] == "code":
            out.extend(convert_code(cell, ctx, solution is not None))
            continue
        if cell["cell_type"] != "markdown":
            out.append(copy.deepcopy(cell))
            continue
        source = _source(cell)
        bounds = [0, *book_contents._split_points(source), len(source)]
        for start, end in itertools.pairwise(bounds):
            piece = source[start:end]
            if book_contents.SOLUTION_START.match(source, start):
                solution, pieces = SOLUTION_LABEL.match(piece).group(1), 0
            elif book_contents.SOLUTION_END.match(source, start):
                solution = None
            elif piece.strip():
                text = render_markdown(piece, ctx)
                if solution is not None:
                    text = _details(_solution_summary(solution, ctx, pieces > 0), text)
                    pieces += 1
                if text.strip():
                    out.append(_markdown(text))
    if solution is not None:
        raise ValueError(f"solution of {solution} is not closed")
    return out


def convert_code(cell: dict[str, Any], ctx: Context, in_solution: bool) -> list[dict[str, Any]]:
    """A code cell without MyST-NB, and its figure caption as a markdown cell below it."""
    cell = copy.deepcopy(cell)
    cell["source"] = GLUE_IMPORT.sub("", _source(cell))
    mystnb = cell["metadata"].pop("mystnb", {}) or {}
    if in_solution:
        tags = cell["metadata"].setdefault("tags", [])
        tags.append("solution")
    cells = [cell]
    figure = mystnb.get("figure") or {}
    if figure.get("caption"):
        name = figure.get("name", "")
        target = ctx.targets.get(name)
        number = target.number if target and target.number else "Figure"
        anchor = f'<a id="{name}"></a>\n\n' if name else ""
        caption = render_markdown(str(figure["caption"]).strip(), ctx)
        cells.append(_markdown(f"{anchor}**{number}** {caption}"))
    return cells


def add_glue_shim(cells: list[dict[str, Any]]) -> None:
    """Define the ``glue`` shim at the top of the first code cell when any cell calls glue."""
    code = [c for c in cells if c["cell_type"] == "code"]
    if code and any(re.search(r"\bglue\(", _source(c)) for c in code):
        code[0]["source"] = GLUE_SHIM + _source(code[0])


def number_title(cells: list[dict[str, Any]], number: str | None) -> None:
    """Prefix the chapter's title (its first ``# `` heading) with the website's number."""
    if not number:
        return
    for cell in cells:
        if cell["cell_type"] == "markdown":
            new, count = re.subn(r"^# (?!\d)", f"# {number}. ", _source(cell), count=1,
                                 flags=re.MULTILINE)
            if count:
                cell["source"] = new
                return


def convert_chapter(text: str, ctx: Context, edition: str, url: str = "") -> Any:
    """One chapter (its MyST text) as a portable notebook of the given edition."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, not {edition!r}")
    if edition == "student":
        text = student_edition.strip_solutions(text)
    notebook = jupytext.reads(text, fmt="md:myst")
    cells = convert_cells([dict(c) for c in notebook.cells], ctx)
    number_title(cells, ctx.chapter_number)
    add_glue_shim(cells)
    note = f"*Shuffle Privacy, {edition} edition.*"
    if url:
        note += f" This chapter on the website: [{url}]({url})."
    cells.insert(0, _markdown(note))
    result = nbformat.v4.new_notebook(cells=[nbformat.from_dict(c) for c in cells])
    result.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                       "name": "python3"},
        "language_info": {"name": "python"},
    }
    for k, cell in enumerate(result.cells):
        cell["id"] = f"cell-{k}"
    nbformat.validate(result)
    return result


def repository_paths(text: str) -> list[str]:
    """Lines of the chapter's code cells that read files by a repository path."""
    notebook = jupytext.reads(text, fmt="md:myst")
    return [line.strip() for cell in notebook.cells if cell.cell_type == "code"
            for line in cell.source.splitlines() if REPOSITORY_PATH.search(line)]


# ---------------------------------------------------------------------------------------------
# Reading the built book
# ---------------------------------------------------------------------------------------------

class PageParser(HTMLParser):
    """Collects from one page of the website: the caption number of every element with an id
    (prf blocks, exercises, figures, tables), the prf and exercise blocks in page order, the
    chapter number and the ids that label the chapter's title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.numbers: dict[str, str] = {}
        self.blocks: list[tuple[str, str]] = []  # (kind, number)
        self.chapter: str | None = None
        self.chapter_ids: list[str] = []
        self.pending: tuple[str, str] | None = None  # (id, kind) waiting for its number
        self.capture: str | None = None  # "caption" or "chapter"
        self.buffer = ""
        self.span_id: str | None = None  # id of an empty span just before the current tag
        self.in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        ident = attributes.get("id")
        if tag == "h1":
            self.in_h1 = True
            if self.span_id and self.chapter is None:
                self.chapter_ids.append(self.span_id)
        self.span_id = ident if tag == "span" and ident else None
        if tag == "div" and "admonition" in classes and (
                "proof" in classes or "exercise" in classes):
            kinds = [c for c in classes if c not in ("proof", "admonition", "dropdown")]
            kind = kinds[0] if kinds else "proof"
            self.pending = (ident or "", kind)
            if kind != "proof":
                self.blocks.append((kind, ""))
        elif tag in ("figure", "table") and ident:
            self.pending = (ident, tag)
        elif tag == "span" and "caption-number" in classes and self.pending:
            self.capture, self.buffer = "caption", ""
        elif tag == "span" and "section-number" in classes and self.in_h1:
            self.capture, self.buffer = "chapter", ""

    def handle_data(self, data: str) -> None:
        if self.capture:
            self.buffer += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self.capture == "caption" and self.pending:
            number = self.buffer.strip()
            ident, kind = self.pending
            if ident:
                self.numbers[ident] = number
            if kind not in ("figure", "table", "proof") and self.blocks:
                self.blocks[-1] = (kind, number)
            self.pending, self.capture = None, None
        elif tag == "span" and self.capture == "chapter":
            if self.chapter is None:
                self.chapter = self.buffer.strip().rstrip(".")
            self.capture = None
        elif tag == "h1":
            self.in_h1 = False
        elif tag == "p" and self.pending and self.pending[1] not in ("figure", "table"):
            self.pending = None  # an admonition title without a number


@dataclass
class Site:
    """What the built website says about every page."""

    pages: dict[str, PageParser]
    targets: dict[str, Target]


def read_site(html_root: Path) -> Site:
    """Parse every page of ``html_root`` and its ``objects.inv`` into label targets."""
    from sphinx.util.inventory import InventoryFile

    pages: dict[str, PageParser] = {}
    for path in sorted((html_root / "book").rglob("*.html")):
        parser = PageParser()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path.relative_to(html_root).as_posix()] = parser
    with (html_root / "objects.inv").open("rb") as stream:
        inventory = InventoryFile.load(stream, "", posixpath.join)
    targets: dict[str, Target] = {}
    for label, (_, _, uri, title) in inventory.get("std:label", {}).items():
        page, _, anchor = uri.partition("#")
        targets[label] = Target(page, anchor, title=title)
    for doc, (_, _, uri, title) in inventory.get("std:doc", {}).items():
        targets.setdefault(doc, Target(uri, "", title=title))
    for page, parser in pages.items():
        for ident, number in parser.numbers.items():
            if ident.startswith("proof") or not number:
                continue
            old = targets.get(ident, Target(page, ident))
            title = None if number.startswith("Exercise") else old.title
            targets[ident] = Target(page, ident, title=title, number=number)
        for ident in parser.chapter_ids:
            if parser.chapter and ident in targets:
                old = targets[ident]
                targets[ident] = Target(old.page, old.anchor, old.title, old.number,
                                        chapter=f"Chapter {parser.chapter}")
    return Site(pages, targets)


SECTION = re.compile(r"^\(([^()\s]+)\)=[ \t]*\n+#{1,6}[ \t]+(.+?)[ \t]*$", re.MULTILINE)


def source_titles(root: Path) -> dict[str, str]:
    """Label -> title of every labelled heading of the book's sources, math kept as ``$...$``
    (the inventory's titles have lost their dollars)."""
    titles = {}
    for path in sorted((root / "book").rglob("*.md")):
        if ".ipynb_checkpoints" not in path.parts:
            titles.update(SECTION.findall(path.read_text(encoding="utf-8")))
    return titles


def with_titles(targets: dict[str, Target], titles: dict[str, str]) -> dict[str, Target]:
    """``targets`` with the titles of labelled headings taken from the sources."""
    return {label: Target(t.page, t.anchor, titles.get(label, t.title), t.number, t.chapter)
            for label, t in targets.items()}


def read_glue(execute_root: Path, chapter: str) -> dict[str, str]:
    """The glued values (``text/plain``) of one executed chapter: its ``.glue.json`` file, or
    else the outputs of its executed notebook that carry ``scrapbook`` metadata."""
    glue_file = execute_root / f"{chapter}.glue.json"
    if glue_file.is_file():
        records = json.loads(glue_file.read_text(encoding="utf-8"))
        return {name: record["data"].get("text/plain", "") for name, record in records.items()}
    notebook_file = execute_root / f"{chapter}.ipynb"
    if not notebook_file.is_file():
        return {}
    values = {}
    for cell in nbformat.read(notebook_file, as_version=4).cells:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook")
            if record:
                prefix = record.get("mime_prefix", "")
                data = output.get("data", {})
                values[record["name"]] = data.get(prefix + "text/plain", data.get(
                    "text/plain", ""))
    return values


ACCENTS = {"'": "\u0301", "`": "\u0300", '"': "\u0308", "^": "\u0302", "~": "\u0303",
           "c": "\u0327", "v": "\u030c", "=": "\u0304", "u": "\u0306", ".": "\u0307"}


def latex_text(text: str) -> str:
    """A BibTeX field as plain text: accents (``{\\'e}``) to Unicode, braces dropped."""
    import unicodedata

    def accent(match: re.Match[str]) -> str:
        return match.group(2) + ACCENTS[match.group(1)]

    text = re.sub(r"\\([`'\"^~=.]|[cvu](?=[{ ]))\s*\{?([A-Za-z])\}?", accent, text)
    text = re.sub(r"\\([A-Za-z]+)\s*", "", text).replace("{", "").replace("}", "")
    return unicodedata.normalize("NFC", text.replace("~", " "))


def _plain(text: str) -> str:
    """Lower-case ASCII letters and digits only (to match a title in two renderings)."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def read_citations(bib_path: Path, bibliography_html: Path) -> dict[str, Citation]:
    """Every entry of the bibliography with its anchor on the website's bibliography page,
    matched by title."""
    from pybtex.database import parse_file

    entries = _bibliography_entries(bibliography_html) if bibliography_html.is_file() else {}
    citations = {}
    for key, entry in parse_file(str(bib_path)).entries.items():
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        surnames = tuple(latex_text(" ".join(p.prelast_names + p.last_names)) for p in persons)
        title = _plain(re.sub(r"\\[^A-Za-z\s]\{?[A-Za-z]\}?|\\[A-Za-z]+", "",
                              entry.fields.get("title", "")))
        anchor = next((a for a, text in entries.items() if title and title in text), "")
        citations[key] = Citation(surnames or (key,), entry.fields.get("year", "n.d."), anchor)
    return citations


def _bibliography_entries(path: Path) -> dict[str, str]:
    """Anchor -> plain text of each entry of the website's bibliography page."""
    page = path.read_text(encoding="utf-8")
    entries = {}
    for match in re.finditer(r'<div class="citation" id="([^"]+)"[^>]*>(.*?)</div>', page,
                             re.DOTALL):
        text = html.unescape(re.sub(r"<[^>]+>", "", match.group(2)))
        entries[match.group(1)] = _plain(text.encode("ascii", "ignore").decode())
    return entries


def toc_chapters(root: Path) -> list[Path]:
    """The notebook chapters of ``_toc.yml``, in its order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part["chapters"]:
            files.append(chapter["file"])
            files.extend(section["file"] for section in chapter.get("sections", []))
    chapters = []
    for name in files:
        path = root / f"{name}.md"
        if path.is_file() and re.search(r"^kernelspec:", path.read_text(encoding="utf-8"),
                                        re.MULTILINE):
            chapters.append(path)
    return chapters


def chapter_context(root: Path, chapter: Path, site: Site, macros: dict[str, Macro],
                    citations: dict[str, Citation], base_url: str) -> Context:
    """The data to render one chapter of the built book."""
    relative = chapter.relative_to(root).with_suffix("")
    page = site.pages.get(relative.as_posix() + ".html")
    if page is None:
        raise SystemExit(f"{relative}.html is missing from the website: build the book first")
    blocks: dict[str, list[str]] = {}
    for kind, number in page.blocks:
        blocks.setdefault(kind, []).append(number)
    glue = read_glue(root / "_build" / "jupyter_execute", relative.as_posix())
    return Context(macros=macros, targets=site.targets, citations=citations, glue=glue,
                   blocks=blocks, chapter_number=page.chapter, base_url=base_url)


def export(root: Path, out: Path, base_url: str) -> dict[str, list[str]]:
    """Write both editions of every chapter; return the chapters that use repository paths."""
    html_root = root / "_build" / "html"
    if not (html_root / "objects.inv").is_file() or not (
            root / "_build" / "jupyter_execute").is_dir():
        raise SystemExit(f"the book is not built ({html_root} or _build/jupyter_execute is "
                         "missing): run `make book` first")
    site = read_site(html_root)
    site.targets = with_titles(site.targets, source_titles(root))
    macros = load_macros(root / "_config.yml")
    citations = read_citations(root / "book" / "references.bib", html_root / BIBLIOGRAPHY_PAGE)
    flagged = {}
    for chapter in toc_chapters(root):
        text = chapter.read_text(encoding="utf-8")
        relative = chapter.relative_to(root / "book").with_suffix(".ipynb")
        name = "_".join(relative.parts)
        page_url = base_url + chapter.relative_to(root).with_suffix(".html").as_posix()
        for edition in EDITIONS:
            ctx = chapter_context(root, chapter, site, macros, citations, base_url)
            notebook = convert_chapter(text, ctx, edition, page_url)
            (out / edition).mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, out / edition / name)
        if paths := repository_paths(text):
            flagged[name] = paths
    return flagged


def raw_myst(text: str, macros: dict[str, Macro]) -> list[str]:
    """MyST syntax and macro names left in a markdown text (the exporter's own check)."""
    found = [token for token in ("```{", ":::{", "{glue", "{ref}", "{prf:", "{cite",
                                 ":label:", "{numref}", "{doc}") if token in text]
    found += [f"\\{name}" for name in macros
              if re.search(r"\\" + re.escape(name) + r"(?![A-Za-z])", text)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL,
                        help="the website's root URL for links (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=None, help="default: <root>/_build/portable")
    args = parser.parse_args()
    base_url = args.base_url if args.base_url.endswith("/") else args.base_url + "/"
    out = args.out or args.root / "_build" / "portable"
    flagged = export(args.root, out, base_url)
    counts = Counter(p.parent.name for p in out.glob("*/*.ipynb"))
    print(f"portable notebooks: {out} ({counts['instructor']} instructor, "
          f"{counts['student']} student)")
    for name, lines in flagged.items():
        print(f"warning: {name} reads files by a repository path: {'; '.join(lines)}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
