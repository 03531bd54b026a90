"""Run the chapters' paper-scale cells: ``make fullscale``.

Each chapter that reproduces a paper at reduced size holds one code cell tagged
``skip-execution`` with the paper's parameters (the website build never runs it), followed by a
cell that sets the website's smaller values. This tool executes such a chapter at the paper's
scale and reports, per chapter, what ran, how long it took, and whether it failed.

What is executed, per chapter (the notebook surgery is in :func:`paper_scale_notebook`):

1. every cell before the paper-scale cell, as the website runs them;
2. the paper-scale cell itself (its ``skip-execution`` tag removed);
3. the website-scale cell that follows it, *without* its assignments to the names the paper-scale
   cell sets (the cell is dropped when nothing else is left in it; whatever else it defines, such
   as ``DELTA`` or helper functions, still runs);
4. every later cell, so every computation that reads the parameters runs at the paper's scale.

Without options every chapter runs to its end, however long that takes: on a loaded 2-core
machine about 35 minutes for the six chapters, the longest (d_sigma attacks) about 15. Options
(a chapter that stops early is reported ``partial``, never ``ok``; the report says how many of the
chapter's code cells ran, and how many of the cells that name a paper-scale parameter):

``--limit-seconds S``
    wall-clock budget per chapter; the running cell is interrupted when it is spent.
``--quick``
    stop after the first cell that does work with a paper-scale name (beyond ``glue``/``print``):
    checks that the paper-scale values are accepted, not that the chapter holds at that scale.
``--timeout S``
    a chapter still running after S seconds is an *error* (default: none).
``--keep-going``
    after a failing cell, run the rest of the chapter and report every failure.

Exit status: 1 if any chapter errors (an exception in a cell, a timeout, or a chapter whose
paper-scale cell cannot be paired with its website-scale cell), else 0. Executed notebooks and
``report.json`` (times, the glued values at both scales) are written to ``_build/fullscale``.

Usage::

    python tools/fullscale.py                       # every chapter with a skip-execution cell
    python tools/fullscale.py book/dsigma/attacks.md --limit-seconds 1200
    python tools/fullscale.py --list                # the chapters and their paper-scale names
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
OUT = ROOT / "_build" / "fullscale"
WEBSITE_RUNS = ROOT / "_build" / "jupyter_execute"  # the website build's executed notebooks
KERNEL = "shuffle-privacy"
SKIP_TAG = "skip-execution"
PAPER_TAG = "fullscale-paper"
OVERRIDE_TAG = "fullscale-website-override"
# calls that only report a value: a cell whose uses of the paper-scale names are all inside
# such calls is not counted as doing work with them (``--quick``)
REPORTING_CALLS = {"glue", "print", "display"}


class SurgeryError(ValueError):
    """The chapter's paper-scale cell cannot be paired with its website-scale cell."""


# --------------------------------------------------------------------------------------------
# notebook surgery
# --------------------------------------------------------------------------------------------

def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _target_names(target: ast.expr) -> set[str] | None:
    """Names bound by an assignment target; None if it binds anything else (x[0], x.a)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple | ast.List):
        names: set[str] = set()
        for elt in target.elts:
            inner = _target_names(elt.value if isinstance(elt, ast.Starred) else elt)
            if inner is None:
                return None
            names |= inner
        return names
    return None


def _statement_targets(stmt: ast.stmt) -> set[str] | None:
    """Names a top-level assignment binds; None for any other statement."""
    if isinstance(stmt, ast.Assign):
        names: set[str] = set()
        for target in stmt.targets:
            inner = _target_names(target)
            if inner is None:
                return None
            names |= inner
        return names
    if isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        return _target_names(stmt.target)
    return None


def assigned_names(source: str) -> set[str]:
    """The names a cell binds at top level with plain assignments."""
    names: set[str] = set()
    for stmt in ast.parse(source).body:
        names |= _statement_targets(stmt) or set()
    return names


def strip_assignments(source: str, names: set[str]) -> tuple[str, set[str]]:
    """``source`` without its top-level assignments to ``names``, and the names removed.

    An assignment that binds one of ``names`` together with another name (``a, other = ...``)
    cannot be split safely and raises :class:`SurgeryError`.
    """
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    removed: set[str] = set()
    for stmt in ast.parse(source).body:
        targets = _statement_targets(stmt)
        if not targets or not targets & names:
            continue
        if not targets <= names:
            raise SurgeryError(
                f"line {stmt.lineno} assigns {sorted(targets & names)} together with "
                f"{sorted(targets - names)}; split it so that the paper-scale names are assigned "
                "on their own"
            )
        drop.update(range(stmt.lineno - 1, stmt.end_lineno))
        removed |= targets
    kept = "".join(line for i, line in enumerate(lines) if i not in drop)
    return kept, removed


def _only_comments(source: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in source.splitlines())


def _names_read(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: fall back to a word scan
        return set(re.findall(r"[A-Za-z_]\w*", source))
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _does_work_with(source: str, names: set[str]) -> bool:
    """True if the cell uses one of ``names`` outside glue()/print()/display() calls."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return bool(_names_read(source) & names)
    reporting: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in REPORTING_CALLS):
            reporting.update(id(sub) for sub in ast.walk(node))
    return any(isinstance(node, ast.Name) and node.id in names and id(node) not in reporting
               for node in ast.walk(tree))


@dataclass
class Plan:
    """The paper-scale version of a chapter and what the surgery did."""

    notebook: nbformat.NotebookNode
    paper_cells: list[int] = field(default_factory=list)  # indices in the new notebook
    paper_names: list[str] = field(default_factory=list)
    override_actions: list[str] = field(default_factory=list)
    consumers: list[int] = field(default_factory=list)  # later cells that read a paper name
    first_work: int | None = None  # first of them that does more than glue/print


def paper_scale_notebook(nb: nbformat.NotebookNode) -> Plan:
    """The notebook with each skip-execution cell enabled and its website override neutralized.

    For every code cell tagged ``skip-execution``: the tag is removed (the cell is tagged
    ``fullscale-paper`` instead); the next cell must be a code cell that assigns at least one of
    the names the paper-scale cell assigns (the website's values); those assignments are removed
    from it, and the cell is dropped if only comments remain (else it is tagged
    ``fullscale-website-override``). Raises :class:`SurgeryError` when there is no skip-execution
    cell or the pairing fails.
    """
    nb = copy.deepcopy(nb)
    skip = [i for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and SKIP_TAG in _tags(cell)]
    if not skip:
        raise SurgeryError("no code cell is tagged skip-execution")
    plan = Plan(notebook=nb)
    names_all: set[str] = set()
    # from the last to the first, so that dropping a cell does not move the ones still to do
    drops: list[int] = []
    for i in reversed(skip):
        paper = nb.cells[i]
        paper.metadata["tags"] = [t for t in _tags(paper) if t != SKIP_TAG] + [PAPER_TAG]
        try:
            names = assigned_names(paper.source)
        except SyntaxError as exc:
            raise SurgeryError(f"the skip-execution cell does not parse: {exc}") from exc
        if not names:
            raise SurgeryError("the skip-execution cell assigns no name")
        names_all |= names
        if i + 1 >= len(nb.cells) or nb.cells[i + 1].cell_type != "code":
            raise SurgeryError("the skip-execution cell is not followed by a code cell "
                               "(the website-scale values)")
        override = nb.cells[i + 1]
        if SKIP_TAG in _tags(override):
            raise SurgeryError("two skip-execution cells in a row")
        kept, removed = strip_assignments(override.source, names)
        if not removed:
            raise SurgeryError(f"the cell after the skip-execution cell assigns none of "
                               f"{sorted(names)}: it is not the website-scale override")
        if names - removed:
            # the paper-scale cell sets more than the website cell: fine, just say so
            plan.override_actions.append(
                f"paper-only names (no website value): {sorted(names - removed)}")
        if _only_comments(kept):
            drops.append(i + 1)
            plan.override_actions.append(f"website cell dropped (it only set {sorted(removed)})")
        else:
            override.source = (f"# fullscale: website values of {', '.join(sorted(removed))} "
                               "removed\n" + kept)
            override.metadata["tags"] = [*_tags(override), OVERRIDE_TAG]
            plan.override_actions.append(
                f"website cell kept without its assignments to {sorted(removed)}")
    for j in sorted(drops, reverse=True):
        del nb.cells[j]
    plan.override_actions.reverse()
    plan.paper_names = sorted(names_all)
    plan.paper_cells = [i for i, cell in enumerate(nb.cells) if PAPER_TAG in _tags(cell)]
    start = plan.paper_cells[0]
    for i, cell in enumerate(nb.cells):
        if i <= start or cell.cell_type != "code" or PAPER_TAG in _tags(cell):
            continue
        if _names_read(cell.source) & names_all:
            plan.consumers.append(i)
            if plan.first_work is None and _does_work_with(cell.source, names_all):
                plan.first_work = i
    return plan


def read_chapter(path: Path) -> nbformat.NotebookNode:
    return jupytext.read(path)


def chapters_with_paper_cells() -> list[Path]:
    """Every chapter (a .md file with a kernelspec) that has a skip-execution cell."""
    found = []
    for path in sorted(BOOK.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^kernelspec:", text, re.MULTILINE) and SKIP_TAG in text:
            found.append(path)
    return found


# --------------------------------------------------------------------------------------------
# execution
# --------------------------------------------------------------------------------------------

@dataclass
class Result:
    chapter: str
    status: str = "ok"  # ok | partial | error
    ran: str = ""
    seconds: float = 0.0
    seconds_before_paper_cell: float = 0.0
    cells_run: int = 0
    cells_total: int = 0
    consumers_run: int = 0
    consumers_total: int = 0
    paper_names: list[str] = field(default_factory=list)
    override: list[str] = field(default_factory=list)
    error: str = ""
    error_cell: str = ""
    errors: list[str] = field(default_factory=list)  # every failing cell (--keep-going)
    slowest_cells: list[tuple[int, float, str]] = field(default_factory=list)
    glued: dict[str, str] = field(default_factory=dict)
    glued_website: dict[str, str] = field(default_factory=dict)


def _glued(nb: nbformat.NotebookNode) -> dict[str, str]:
    """The values a notebook glues (myst-nb's ``glue``), as their plain-text form."""
    values = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is not None:
                data = output.get("data", {})
                plain = [v for k, v in data.items() if k.endswith("text/plain")]
                values[name] = str(plain[0]) if plain else "?"
    return values


def website_glued(rel: str) -> dict[str, str]:
    """The glued values of the last website build (``<chapter>.glue.json``), if there is one.

    That build may predate the current source; it is only there to compare the two scales.
    """
    path = WEBSITE_RUNS / Path(rel).with_suffix(".glue.json")
    if not path.exists():
        return {}
    outputs = json.loads(path.read_text(encoding="utf-8"))
    return _glued(nbformat.from_dict({"cells": [{"outputs": list(outputs.values())}]}))


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip()[:70]
    return source.strip()[:70]


def _short_error(exc: BaseException) -> str:
    if isinstance(exc, CellExecutionError):
        ename, evalue = getattr(exc, "ename", ""), getattr(exc, "evalue", "")
        if ename:
            return f"{ename}: {evalue}"[:300]
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def _relative(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def run_chapter(path: Path, *, quick: bool = False, limit_seconds: float | None = None,
                timeout: float | None = None, keep_going: bool = False,
                progress: bool = True) -> Result:
    rel = _relative(path)
    result = Result(chapter=rel)
    try:
        plan = paper_scale_notebook(read_chapter(path))
    except (SurgeryError, SyntaxError) as exc:
        result.status, result.error, result.ran = "error", f"surgery: {exc}", "nothing"
        return result
    nb = plan.notebook
    result.paper_names, result.override = plan.paper_names, plan.override_actions
    result.consumers_total = len(plan.consumers)
    last = len(nb.cells) - 1
    if quick:
        last = plan.first_work if plan.first_work is not None else plan.paper_cells[-1]
    code_cells = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and i <= last]
    result.cells_total = sum(cell.cell_type == "code" for cell in nb.cells)
    budget = min(x for x in (limit_seconds, timeout, float("inf")) if x is not None)

    client = NotebookClient(nb, kernel_name=KERNEL, timeout=None, allow_errors=keep_going,
                            resources={"metadata": {"path": str(path.parent)}})
    cell_seconds: dict[int, float] = {}
    start = time.monotonic()
    stopped = None  # why the run ended early
    try:
        with client.setup_kernel():
            for n, i in enumerate(code_cells, 1):
                cell = nb.cells[i]
                remaining = budget - (time.monotonic() - start)
                if remaining <= 0:
                    stopped = "budget"
                    result.error_cell = f"cell {n - 1}"
                    break
                client.timeout = None if remaining == float("inf") else max(1, int(remaining))
                if progress:
                    mark = " [paper-scale cell]" if i in plan.paper_cells else ""
                    print(f"  {rel}: cell {n}/{len(code_cells)}{mark} "
                          f"{_first_line(cell.source)!r} (t={time.monotonic() - start:.0f}s)",
                          flush=True)
                t0 = time.monotonic()
                try:
                    client.execute_cell(cell, i)
                except CellTimeoutError:
                    cell_seconds[i] = time.monotonic() - t0
                    stopped = "budget"
                    result.error_cell = f"cell {n}: {_first_line(cell.source)}"
                    break
                cell_seconds[i] = time.monotonic() - t0
                expected = "raises-exception" in _tags(cell)  # nbclient lets these fail
                for output in cell.get("outputs", []):
                    if output.get("output_type") == "error" and not expected:  # --keep-going
                        message = f"{output.get('ename')}: {output.get('evalue')}"[:300]
                        where = f"cell {n}: {_first_line(cell.source)}"
                        result.errors.append(f"{where}: {message}")
                        if result.status != "error":
                            result.status, result.error, result.error_cell = "error", message, where
                        if progress:
                            print(f"  ERROR (continuing, --keep-going) {message}", flush=True)
                result.cells_run = n
                if i in plan.consumers:
                    result.consumers_run += 1
                if i < plan.paper_cells[0]:
                    result.seconds_before_paper_cell += cell_seconds[i]
    except (CellExecutionError, DeadKernelError, RuntimeError) as exc:
        result.status, result.error = "error", _short_error(exc)
        failing = [i for i in code_cells if i not in cell_seconds]
        if failing:
            cell = nb.cells[failing[0]]
            number = code_cells.index(failing[0]) + 1
            result.error_cell = f"cell {number}: {_first_line(cell.source)}"
    result.seconds = time.monotonic() - start

    if stopped == "budget" and result.status != "error":
        if timeout is not None and (limit_seconds is None or timeout <= limit_seconds):
            result.status = "error"
            result.error = f"timeout: still running after {timeout:.0f} s"
        else:
            result.status = "partial"
    elif quick and result.status == "ok" and result.cells_run < result.cells_total:
        result.status = "partial"
        result.error_cell = f"cell {result.cells_run}"

    done = f"{result.cells_run} of the chapter's {result.cells_total} code cells"
    consumers = (f"{result.consumers_run}/{result.consumers_total} of the cells naming "
                 f"{', '.join(plan.paper_names)}")
    if result.status == "ok":
        result.ran = f"whole chapter at paper scale ({done}; {consumers})"
    elif result.status == "partial":
        why = "--quick" if quick and stopped is None else f"stopped at the {budget:.0f} s limit"
        result.ran = f"PARTIAL ({why}): {done}; {consumers} at paper scale"
    else:
        result.ran = f"failed after {done}; {consumers}"
        if stopped == "budget" and not result.error.startswith("timeout"):
            result.ran += f"; then stopped at the {budget:.0f} s limit"
    result.slowest_cells = sorted(
        ((code_cells.index(i) + 1, round(s, 1), _first_line(nb.cells[i].source))
         for i, s in cell_seconds.items()), key=lambda row: -row[1])[:3]
    result.glued = _glued(nb)
    result.glued_website = website_glued(rel)
    target = OUT / Path(rel).relative_to(Path(rel).anchor).with_suffix(".ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return result


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------

def _table(results: list[Result]) -> str:
    rows = [("chapter", "status", "seconds", "what ran")]
    for r in results:
        rows.append((r.chapter, r.status, f"{r.seconds:.0f}", r.ran))
    widths = [max(len(row[k]) for row in rows) for k in range(3)]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[k]) for k, cell in enumerate(row[:3]))
                     + "  " + row[3])
        if j == 0:
            lines.append("-" * (sum(widths) + 6 + len("what ran")))
    return "\n".join(lines)


def report(results: list[Result], json_path: Path = OUT / "report.json") -> str:
    out = ["", "Paper-scale runs (tools/fullscale.py)", "", _table(results), ""]
    for r in results:
        out.append(f"{r.chapter}: {r.status}, {r.seconds:.0f} s "
                   f"({r.seconds_before_paper_cell:.0f} s before the paper-scale cell)")
        out.append(f"  paper-scale names: {', '.join(r.paper_names) or '-'}")
        for action in r.override:
            out.append(f"  {action}")
        if r.error:
            out.append(f"  ERROR in {r.error_cell or '?'}: {r.error}")
        elif r.status == "partial":
            out.append(f"  NOT RUN AT PAPER SCALE: everything after {r.error_cell or 'the stop'}"
                       " (see 'what ran')")
        for extra in r.errors[1:]:
            out.append(f"  then (--keep-going; may follow from the first error) {extra}")
        if r.slowest_cells:
            out.append("  slowest cells: " + "; ".join(
                f"#{n} {s:.0f} s {src!r}" for n, s, src in r.slowest_cells))
        changed = {k: (r.glued_website[k], v) for k, v in r.glued.items()
                   if k in r.glued_website and r.glued_website[k] != v}
        unknown = [k for k in r.glued if k not in r.glued_website]
        if r.glued:
            out.append(f"  {len(r.glued)} glued values; {len(changed)} differ from the last "
                       f"website build, {len(unknown)} are not in it (a build older than the "
                       "source, or none); all in " + str(json_path))
        if changed:
            out.append("  glued values that differ (website build -> paper scale):")
            for name, (web, paper) in list(changed.items())[:25]:
                out.append(f"    {name}: {web} -> {paper}")
            if len(changed) > 25:
                out.append(f"    ... {len(changed) - 25} more")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("chapters", nargs="*", type=Path,
                        help="chapter .md files (default: every chapter with a skip-execution "
                             "cell)")
    parser.add_argument("--quick", action="store_true",
                        help="stop after the first cell that does work with a paper-scale name")
    parser.add_argument("--limit-seconds", type=float, default=None,
                        help="wall-clock budget per chapter; a chapter that hits it is 'partial'")
    parser.add_argument("--keep-going", action="store_true",
                        help="after a failing cell, run the rest of the chapter and report "
                             "every failure (the chapter is still an error)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="a chapter running longer than this is an error (default: none)")
    parser.add_argument("--list", action="store_true",
                        help="list the chapters, their paper-scale names and the surgery; "
                             "run nothing")
    parser.add_argument("--report", type=Path, default=OUT / "report.json",
                        help="the JSON report (default: _build/fullscale/report.json)")
    args = parser.parse_args(argv)
    chapters = [p.resolve() for p in args.chapters] or chapters_with_paper_cells()
    if args.list:
        for path in chapters:
            try:
                plan = paper_scale_notebook(read_chapter(path))
                print(f"{_relative(path)}: {', '.join(plan.paper_names)}; "
                      f"{'; '.join(plan.override_actions)}; {len(plan.consumers)} consuming cells")
            except SurgeryError as exc:
                print(f"{_relative(path)}: ERROR {exc}")
        return 0
    results = []
    for path in chapters:
        print(f"== {_relative(path)}", flush=True)
        result = run_chapter(path, quick=args.quick, limit_seconds=args.limit_seconds,
                             timeout=args.timeout, keep_going=args.keep_going)
        print(f"== {result.chapter}: {result.status} in {result.seconds:.0f} s: {result.ran}"
              + (f"\n   {result.error}" if result.error else ""), flush=True)
        results.append(result)
    print(report(results, args.report))
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps([asdict(r) for r in results], indent=1), encoding="utf-8")
    print(f"\nreport: {args.report}; executed notebooks: {OUT}")
    return 1 if any(r.status == "error" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
