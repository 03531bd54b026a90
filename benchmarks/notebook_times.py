"""Per-notebook execution time against the book's goal (about 90 s each on an idle 2-core
machine), read from the execution cache that the last ``make book`` filled.

The build records each notebook's wall time; this table shows it next to the goal. Times taken
while the machine was busy are larger: rebuild on an idle machine (``make clean && make book``)
before reading the table as a measurement.
"""

from __future__ import annotations

import re
from pathlib import Path

GOAL_SECONDS = 90.0
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"


def notebook_times() -> dict[str, tuple[float, bool]] | None:
    """Seconds per notebook chapter (path relative to the project) from its latest execution,
    and whether that execution is of the current source; None without a cache."""
    if not (CACHE / "global.db").exists():
        return None
    from jupyter_cache import get_cache

    chapters = {
        path.resolve(): str(path.relative_to(ROOT))
        for path in (ROOT / "book").rglob("*.md")
        if re.search(r"^kernelspec:", path.read_text(encoding="utf-8"), re.MULTILINE)
    }
    cache = get_cache(str(CACHE))
    current = {
        Path(record.uri).resolve()
        for record in cache.list_project_records()
        if cache.get_cached_project_nb(record.pk) is not None
    }
    times: dict[str, tuple[float, bool]] = {}
    for record in sorted(cache.list_cache_records(), key=lambda r: r.created):
        path = Path(record.uri).resolve()
        if path in chapters and "execution_seconds" in record.data:
            times[chapters[path]] = (float(record.data["execution_seconds"]), path in current)
    return times


def print_table() -> None:
    """One row per notebook: seconds, share of the goal, and whether the goal was met."""
    times = notebook_times()
    print()
    if times is None:
        print(f"notebooks: no execution cache at {CACHE}; run `make book` first")
        return
    header = f"{'notebook (last build)':<58} {'seconds':>10} {'goal (s)':>13} {'of goal':>9}"
    print(header)
    print("-" * len(header))
    for name, (seconds, fresh) in sorted(times.items(), key=lambda item: -item[1][0]):
        verdict = "met" if seconds <= GOAL_SECONDS else "MISSED"
        stale = "" if fresh else " (source changed since)"
        print(f"{name:<58} {seconds:>10.1f} {GOAL_SECONDS:>13.0f} "
              f"{seconds / GOAL_SECONDS:>8.2f}x  {verdict}{stale}")
    print("times recorded by the last build; rebuild on an idle machine for a measurement")
