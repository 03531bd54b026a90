"""The website's download menu offers what works outside our toolchain: a Sphinx extension
(``sphinx.local_extensions``).

sphinx-book-theme's menu offers the page's MyST source (``.md``) and "print to PDF" through the
browser. On each page of the book this extension changes it to:

- ``.md``: the source, as before (opens as a notebook with jupytext);
- ``.ipynb``: the page's **portable notebook** (``_portable/<name>.ipynb``: plain CommonMark,
  numbers from the build, no MyST, written by ``tools/portable_notebooks.py``), for any Jupyter
  client; only on pages that are notebooks;
- ``.pdf``: the page's PDF (``_pdf/<name>.pdf``) and the whole book's (``_pdf/book.pdf``),
  printed by ``tools/book_pdf.py``; pages the PDF leaves out (the API reference's modules) keep
  the theme's "print" entry.

The files are written after the Sphinx build (``make book`` and ``make student`` run both
tools), so the links name them before they exist; the website's link test
(``tests/test_site_browser.py``) fails if one is missing after the build.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from book_pdf import Page, book_pages
from sphinx.application import Sphinx


def _is_notebook(app: Sphinx, pagename: str) -> bool:
    source = Path(app.env.doc2path(pagename))
    return source.suffix == ".md" and source.is_file() and bool(
        re.search(r"^kernelspec:", source.read_text(encoding="utf-8"), re.MULTILINE))


def _link(url: str, text: str, tooltip: str, icon: str, label: str) -> dict[str, str]:
    return {"type": "link", "url": url, "text": text, "tooltip": tooltip, "icon": icon,
            "label": label}


def _downloads(app: Sphinx, pagename: str, templatename: str, context: dict,
               doctree: object) -> None:
    """``html-page-context``, after the theme made its menu: replace its entries."""
    group = next((button for button in context.get("header_buttons", [])
                  if button.get("label") == "download-buttons"), None)
    if group is None:
        return
    pathto = context["pathto"]
    stem = Page(pagename, "").stem  # the file name both tools give the page
    buttons = [button for button in group["buttons"]
               if button.get("label") == "download-source-button"]
    if _is_notebook(app, pagename):
        buttons.append(_link(pathto(f"_portable/{stem}.ipynb", 1), ".ipynb",
                             "Download this chapter as a notebook for any Jupyter client",
                             "fas fa-code", "download-notebook-button"))
    if pagename in _pdf_pages(app.srcdir):
        buttons.append(_link(pathto(f"_pdf/{stem}.pdf", 1), ".pdf",
                             "Download this chapter as PDF", "fas fa-file-pdf",
                             "download-pdf-button"))
        buttons.append(_link(pathto("_pdf/book.pdf", 1), "book .pdf",
                             "Download the whole book as PDF", "fas fa-book",
                             "download-book-pdf-button"))
    else:
        buttons += [button for button in group["buttons"]
                    if button.get("label") == "download-pdf-button"]
    group["buttons"] = buttons


@functools.cache
def _pdf_pages(srcdir: str) -> frozenset[str]:
    """The pages ``tools/book_pdf.py`` prints."""
    return frozenset(page.docname for page in book_pages(Path(srcdir)))


def setup(app: Sphinx) -> dict:
    """Register the menu change (after sphinx-book-theme's, priority 501)."""
    app.connect("html-page-context", _downloads, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
