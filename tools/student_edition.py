"""The student edition: the book's sources with every exercise solution removed.

``make student`` runs this script, which copies the book's sources (``_config.yml``, ``_toc.yml``,
``book/``) into ``_build/student/source`` with every gated solution block
(```` ```{solution-start} ```` ... ```` ```{solution-end} ```` and its closing fence) cut out, and
writes one downloadable notebook per chapter into ``_build/student/notebooks``. The Makefile then
builds the website from the copy into ``_build/student/html``. Exercises stay, with their labels,
so numbering and cross-references are the same as in the instructor edition.

Sphinx-exercise's own ``hide_solutions`` option does not handle the gated form the chapters use,
hence this small step on the sources.
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

import jupytext

SOLUTION = re.compile(
    r"^```\{solution-start\}[^\n]*\n.*?^```\{solution-end\}\n```[ \t]*\n?",
    re.MULTILINE | re.DOTALL,
)


def strip_solutions(text: str) -> str:
    """``text`` with every gated solution block removed (and nothing else changed). Raises
    ``ValueError`` when the solution fences do not pair up, so a malformed chapter cannot leak a
    solution silently."""
    stripped = SOLUTION.sub("", text)
    if "{solution-start}" in stripped or "{solution-end}" in stripped:
        raise ValueError("unpaired solution-start / solution-end fences")
    return stripped


def make_sources(root: Path, out: Path) -> list[Path]:
    """Copy the book's sources from ``root`` into ``out`` without solutions; return the chapters
    (MyST notebooks) written."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, out / name)
    shutil.copytree(root / "book", out / "book")
    chapters = []
    for source in sorted((out / "book").rglob("*.md")):
        text = source.read_text(encoding="utf-8")
        source.write_text(strip_solutions(text), encoding="utf-8")
        if re.search(r"^kernelspec:", text, re.MULTILINE):
            chapters.append(source)
    return chapters


def export_notebooks(chapters: list[Path], source_root: Path, out: Path) -> None:
    """One ``.ipynb`` (unexecuted) per chapter, named after its path under ``book/``."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for chapter in chapters:
        relative = chapter.relative_to(source_root / "book").with_suffix(".ipynb")
        jupytext.write(jupytext.read(chapter), out / "_".join(relative.parts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--out", type=Path, default=None,
                        help="default: <root>/_build/student")
    args = parser.parse_args()
    out = args.out or args.root / "_build" / "student"
    chapters = make_sources(args.root, out / "source")
    export_notebooks(chapters, out / "source", out / "notebooks")
    print(f"student sources: {out / 'source'} ({len(chapters)} chapters); "
          f"notebooks: {out / 'notebooks'}")


if __name__ == "__main__":
    main()
