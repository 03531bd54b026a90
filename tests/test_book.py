"""Checks on the built book: run after `jupyter-book build` (``make test`` does so).

They read the execution cache that the strict build fills, so they fail (not skip) when the book
has not been built: a missing cache means the build did not execute the notebooks.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from jupyter_cache import get_cache

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
# A hard ceiling that catches runaway cells, independent of machine load (a loaded 2-core machine
# runs 4x slower). The book's goal, about 90 s per notebook on an idle machine, is a `make bench`
# row (benchmarks/notebook_times.py), not a test.
CEILING_SECONDS = 600.0


def _notebooks() -> list[Path]:
    """Every notebook chapter run through the cache: a MyST markdown file whose front matter has a
    kernelspec (pages that ask for ``execution_mode: force``, such as the course page, which
    measures the other chapters, run on every build and have no cache record)."""
    return sorted(
        path for path in (ROOT / "book").rglob("*.md") if ".ipynb_checkpoints" not in path.parts
        and re.search(r"^kernelspec:", text := path.read_text(encoding="utf-8"), re.MULTILINE)
        and not re.search(r"^\s*execution_mode:\s*force", text, re.MULTILINE)
    )


def _toc_files() -> set[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = {toc["root"]}
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            files.add(chapter["file"])
            files.update(section["file"] for section in chapter.get("sections", []))
    return files


def _execution_seconds() -> dict[Path, float]:
    if not (CACHE / "global.db").exists():
        pytest.fail(f"no execution cache at {CACHE}: build the book first (make book)")
    cache = get_cache(str(CACHE))
    times = {}
    for record in cache.list_project_records():
        cached = cache.get_cached_project_nb(record.pk)
        if cached is not None:
            times[Path(record.uri).resolve()] = float(cached.data["execution_seconds"])
    return times


def test_every_notebook_ran_below_the_runaway_ceiling() -> None:
    notebooks = _notebooks()
    assert notebooks, "no notebook chapters found"
    times = _execution_seconds()
    missing = [str(nb.relative_to(ROOT)) for nb in notebooks if nb.resolve() not in times]
    assert not missing, f"notebooks without a current execution record: {missing}"
    report = {str(nb.relative_to(ROOT)): round(times[nb.resolve()], 1) for nb in notebooks}
    slow = {name: seconds for name, seconds in report.items() if seconds > CEILING_SECONDS}
    assert not slow, f"notebooks over {CEILING_SECONDS:.0f} s: {slow} (all: {report})"


def test_no_ipynb_is_tracked_by_git() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert not tracked, f"chapters must be jupytext .md files, found tracked notebooks: {tracked}"


def test_every_book_page_is_in_the_table_of_contents() -> None:
    pages = {str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "book").rglob("*.md")
             if ".ipynb_checkpoints" not in p.parts}
    orphans = pages - _toc_files()
    assert not orphans, f"pages missing from _toc.yml (they would not be built): {sorted(orphans)}"
