"""The quick start's code blocks and the output each one shows, read from the documents.

A snippet is a fenced ```` ```python ```` block followed directly (blank lines only in between) by
a ```` ```text ```` block holding what the code prints. ``README.md`` is read from its
"## Quick start" heading to the next "## " heading; the book's quick-start page is read whole.
Used by ``test_quickstart.py`` (run here) and ``test_wheel.py`` (run from an installed wheel).
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
QUICKSTART_PAGE = ROOT / "book" / "back" / "api" / "quickstart.md"
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$",
                   re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Snippet:
    where: str  # file:line of the code block
    code: str
    expected: str  # what the code prints


def _section(text: str, heading: str) -> tuple[str, int]:
    """The part of ``text`` under ``## heading...`` up to the next ``## ``, and its first line."""
    start = re.search(rf"^## {re.escape(heading)}.*$", text, re.MULTILINE)
    if start is None:
        raise ValueError(f"no '## {heading}' section")
    end = re.search(r"^## ", text[start.end():], re.MULTILINE)
    stop = start.end() + end.start() if end else len(text)
    return text[start.start():stop], text[:start.start()].count("\n")


def snippets(path: Path, section: str | None = None) -> list[Snippet]:
    """Every python block of ``path`` (of its ``section`` if given) with its printed output.

    Raises ``ValueError`` when a python block has no output block right after it."""
    text = path.read_text(encoding="utf-8")
    offset = 0
    if section is not None:
        text, offset = _section(text, section)
    blocks = list(FENCE.finditer(text))
    found = []
    for index, block in enumerate(blocks):
        if block.group("lang") != "python":
            continue
        line = offset + text[:block.start()].count("\n") + 1
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if (following is None or following.group("lang") != "text"
                or text[block.end():following.start()].strip()):
            raise ValueError(f"{where}: a python block must be followed by a text block holding "
                             "its output")
        found.append(Snippet(where, block.group("body"), following.group("body")))
    return found


def run(code: str, where: str = "<snippet>") -> str:
    """What ``code`` prints, run in a fresh namespace."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, where, "exec"), {"__name__": "__quickstart__"})
    return out.getvalue()


def all_snippets() -> list[Snippet]:
    """The README's quick start, then the book's quick-start page."""
    return snippets(README, "Quick start") + snippets(QUICKSTART_PAGE)
