"""The book as PDF: the built website's pages printed by headless Chromium, one file per page
and the whole book in one file.

Why print the website rather than use Jupyter Book's LaTeX builder: the website is what the tests
already check (every formula typeset by MathJax with the book's macros, every glued number,
theorem and exercise numbers, figures with alt text, the accessibility audit), and the same
Chromium prints it; a LaTeX build would be a second rendering of the book, needing a TeX Live
of about 1 GB and its own fixes for everything MathJax accepts and LaTeX does not (the chapters'
``\\tag``, Unicode in math, sphinx-proof and sphinx-exercise boxes).

For each page of the table of contents (the API reference's module pages and the execution
statistics excepted: they are generated listings, read online) Chromium opens the page from a
local server and, before printing:

- waits for MathJax, the fonts, every image and the saved widgets;
- opens every aside, solution and dropdown (the instructor edition prints its solutions; the
  student edition has none), but not the hidden code cells, which hold verification that does
  not teach;
- turns links to other pages into plain text (their numbers, "Theorem 6.1", are in the text);
  links within the page stay, and with ``--base-url`` links to other pages go to the website;
- lays the page out at the printed width (A4 less the margins) in print media, shrinks what is
  still wider (long display formulas, wide tables; at most by half), wraps long code lines, and
  lets boxes and code break across pages (the theme keeps each whole, which left near-empty
  pages before every long solution).

The page is printed as a tagged PDF (A4, images keep their alt text for screen readers) with the
browser's print stylesheet. ``book.pdf`` is a title page, a table of contents with page numbers,
then every page in order, with bookmarks by part and chapter and the book's page number at the
foot of each page; each page's own PDF is numbered "k / n". ``manifest.json`` records, per page,
the title, page count and the figures printed, for ``tests/test_book_pdf.py``.

Usage: ``python tools/book_pdf.py [--site _build/html] [--edition instructor] [--base-url URL]``;
writes ``<site>/_pdf/`` (the website's download menu links each page to its PDF:
``tools/page_downloads.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import html
import http.server
import io
import json
import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml
from pypdf import PdfReader, PdfWriter

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))  # as the browser tests
# Pages the PDF leaves out: generated listings, read on the website.
LEFT_OUT = ("book/back/api/", "book/back/execution_statistics")
KEPT_IN = ("book/back/api/quickstart",)
MARGIN = {"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"}
PRINT_WIDTH = round((210 - 14 - 14) / 25.4 * 96)  # CSS pixels across the printed area
PARALLEL = 3  # pages printed at once (2 cores: MathJax is the bottleneck)
# pypdf warns about every Chromium PDF ("Object count ... exceeds defined trailer size"): harmless
logging.getLogger("pypdf").setLevel(logging.ERROR)


@dataclass(frozen=True)
class Page:
    """One page of the table of contents: its source name and the part it belongs to."""

    docname: str
    part: str

    @property
    def stem(self) -> str:
        """The PDF's file name, as the portable notebooks name theirs (``clones_amplification``)."""
        name = self.docname.removeprefix("book/")
        return name.replace("/", "_")


@dataclass
class Printed:
    """What printing a page gave: its title, page count and the figures in it."""

    docname: str
    part: str
    stem: str
    title: str
    pages: int = 0
    figures: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0


def book_pages(root: Path) -> list[Page]:
    """The pages of ``_toc.yml`` in order, without the generated listings (``LEFT_OUT``)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages = [Page(toc["root"], "")]
    for part in toc.get("parts", []):
        for chapter in part["chapters"]:
            files = [chapter["file"], *(s["file"] for s in chapter.get("sections", []))]
            pages += [Page(name, part.get("caption", "")) for name in files]
    return [page for page in pages
            if page.docname in KEPT_IN or not page.docname.startswith(LEFT_OUT)]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """The site on a free local port; yields its origin."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


# Runs in the page after the load event; returns the title and the figures that will print.
PREPARE_JS = r"""
async (baseUrl) => {
  const MJ = window.MathJax;
  if (MJ && MJ.startup && MJ.startup.promise) await MJ.startup.promise;
  // asides, solutions and dropdowns open; hidden code cells (details.hide) stay closed
  for (const d of document.querySelectorAll('details:not(.hide)')) d.open = true;
  for (const e of document.querySelectorAll('.toggle-hidden')) e.classList.remove('toggle-hidden');
  for (const b of document.querySelectorAll('button.toggle-button')) b.remove();
  // shadows print as one raster image each (a third of a chapter's bytes): none on paper;
  // hidden code cells print nothing, not even their "Show code" line; long code lines wrap
  // (a page cannot scroll)
  const style = document.createElement('style');
  style.textContent = `@media print {
    body *:not(#no-such-id) { box-shadow: none !important; text-shadow: none !important; }
    details.hide:not([open]) { display: none !important; }
    pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
    .admonition, div.highlight, div[class*=highlight-], div.cell, div.cell_input,
    div.cell_output, div.literal-block-wrapper, pre {
      break-inside: auto !important; }
    h1, h2, h3, h4, .admonition-title { break-inside: avoid; break-after: avoid !important; } }`;
  document.head.appendChild(style);
  // links to other pages: to the website when a base URL is given, else plain text
  for (const a of Array.from(document.querySelectorAll('article a[href]'))) {
    const url = new URL(a.getAttribute('href'), document.baseURI);
    if (url.origin !== location.origin) continue;
    if (url.pathname === location.pathname) continue;
    if (baseUrl) { a.href = baseUrl + url.pathname.slice(1) + url.hash; continue; }
    a.removeAttribute('href');
  }
  // the page is laid out at the printed width: shrink what is still wider (long display
  // formulas, wide tables) rather than let the paper cut it off
  const wide = Array.from(document.querySelectorAll(
    'article mjx-container[display="true"], article table'));
  for (const element of wide) {
    const room = element.parentElement.clientWidth;
    if (element.scrollWidth > room + 1) {
      element.style.zoom = Math.max(0.5, room / element.scrollWidth).toFixed(3);
    }
  }
  const images = Array.from(document.querySelectorAll('article img'));
  for (const img of images) img.loading = 'eager';
  await Promise.all(images.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener('load', done); img.addEventListener('error', done);
    setTimeout(done, 20000);
  })));
  const views = document.querySelectorAll(
    'script[type="application/vnd.jupyter.widget-view+json"]');
  const drawn = () => document.querySelectorAll('.widget-subarea > .jupyter-widgets').length;
  for (let waited = 0; drawn() < views.length && waited < 10000; waited += 100) {
    await new Promise(done => setTimeout(done, 100));
  }
  await document.fonts.ready;
  const figures = images.filter(img => img.offsetParent !== null).map(img => ({
    src: img.getAttribute('src'), alt: img.getAttribute('alt') || '',
    caption: (img.closest('figure')?.querySelector('figcaption')?.innerText || '')
      .replace(/\s+/g, ' ').trim(),
    broken: !(img.complete && img.naturalWidth > 0)}));
  const h1 = document.querySelector('article h1');
  const title = h1 ? h1.innerText.replace(/#\s*$/, '').trim() : document.title;
  // the theme prints the title without its chapter number: print it with the number
  const printed = document.querySelector('#jb-print-docs-body h1');
  if (printed && h1) printed.innerHTML = h1.innerHTML;
  for (const a of document.querySelectorAll('#jb-print-docs-body h1 a.headerlink')) a.remove();
  return {title, figures};
}
"""


async def _print_page(context: object, origin: str, page: Page, out: Path,
                      base_url: str) -> Printed:
    start = time.monotonic()
    tab = await context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        await tab.emulate_media(media="print")
        await tab.goto(f"{origin}/{page.docname}.html", wait_until="load", timeout=120_000)
        info = await tab.evaluate(PREPARE_JS, base_url)
        await tab.pdf(path=str(out / f"{page.stem}.pdf"), format="A4", margin=MARGIN,
                      print_background=True, tagged=True, outline=True)
    finally:
        await tab.close()
    if errors:
        raise RuntimeError(f"{page.docname}: JavaScript errors while printing: {errors}")
    broken = [figure["src"] for figure in info["figures"] if figure["broken"]]
    if broken:
        raise RuntimeError(f"{page.docname}: images that did not load: {broken}")
    pages = len(PdfReader(out / f"{page.stem}.pdf").pages)
    return Printed(page.docname, page.part, page.stem, info["title"], pages,
                   [{k: f[k] for k in ("src", "alt", "caption")} for f in info["figures"]],
                   round(time.monotonic() - start, 1))


async def _print_all(site: Path, pages: list[Page], out: Path, base_url: str,
                     chromium: Path) -> list[Printed]:
    from playwright.async_api import async_playwright

    done: dict[str, Printed] = {}
    queue = list(pages)
    with serve(site) as origin:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=str(chromium), headless=True,
                args=["--disable-background-networking", "--disable-component-update",
                      "--no-first-run", "--disable-sync"])
            # the printable width of A4 with these margins (182 mm at 96 px per inch), so that
            # the page is measured as it will print
            context = await browser.new_context(viewport={"width": PRINT_WIDTH, "height": 1000},
                                                service_workers="block")

            async def block(route: object) -> None:  # nothing leaves this machine
                request_url = route.request.url
                if request_url.startswith(origin) or request_url.startswith("data:"):
                    await route.continue_()
                else:
                    await route.abort()

            await context.route("**/*", block)

            async def worker() -> None:
                while queue:
                    page = queue.pop(0)
                    done[page.docname] = await _print_page(context, origin, page, out, base_url)
                    print(f"  {page.docname}: {done[page.docname].pages} pages, "
                          f"{done[page.docname].seconds} s", flush=True)

            await asyncio.gather(*(worker() for _ in range(PARALLEL)))
            await browser.close()
    return [done[page.docname] for page in pages]


def _html_document(body: str, css: str) -> str:
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><style>{css}</style>"
            f"</head><body>{body}</body></html>")


FRONT_CSS = """
@page { size: A4; margin: 25mm 22mm; }
body { font-family: 'Lato', 'DejaVu Sans', sans-serif; color: #222; }
h1 { font-size: 30pt; margin-top: 70mm; margin-bottom: 6mm; }
.subtitle { font-size: 14pt; color: #444; }
.edition { margin-top: 12mm; font-size: 12pt; }
.cover { break-after: page; }
h2 { font-size: 18pt; }
.part { font-weight: bold; margin-top: 4mm; }
.entry { display: flex; margin: 1mm 0 1mm 6mm; }
.entry .title { flex: 0 1 auto; }
.entry .dots { flex: 1 1 auto; border-bottom: 1px dotted #888; margin: 0 2mm 1.2mm; }
.entry .page { flex: 0 0 auto; }
"""


def front_matter_html(printed: list[Printed], first_pages: list[int], edition: str,
                      version: str) -> str:
    """The title page and the table of contents (chapter titles with their first pages)."""
    lines = ["<div class='cover'><h1>Shuffle Privacy</h1>",
             "<p class='subtitle'>An executable textbook on privacy and shuffling</p>",
             f"<p class='edition'>{html.escape(edition.capitalize())} edition, printed from the "
             f"website; shuffle_lib {html.escape(version)}</p></div>",
             "<h2>Contents</h2>"]
    part = None
    for page, first in zip(printed, first_pages, strict=True):
        if page.part != part and page.part:
            lines.append(f"<div class='part'>{html.escape(page.part)}</div>")
        part = page.part
        lines.append(f"<div class='entry'><span class='title'>{html.escape(page.title)}</span>"
                     f"<span class='dots'></span><span class='page'>{first}</span></div>")
    return _html_document("\n".join(lines), FRONT_CSS)


NUMBERS_CSS = """
@page { size: A4; margin: 0; }
body { margin: 0; font-family: 'DejaVu Sans', sans-serif; font-size: 8.5pt; color: #555; }
.sheet { height: 296.9mm; position: relative; break-after: page; overflow: hidden; }
.sheet:last-child { break-after: auto; }
.label { position: absolute; bottom: 8mm; left: 0; right: 0; text-align: center; }
"""


def numbers_html(labels: list[str]) -> str:
    """One A4 sheet per label, the label at the foot: laid over the printed pages."""
    sheets = "".join(f"<div class='sheet'><div class='label'>{html.escape(label)}</div></div>"
                     for label in labels)
    return _html_document(sheets, NUMBERS_CSS)


async def _print_html(documents: dict[str, str], out: Path, chromium: Path) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(chromium), headless=True)
        tab = await browser.new_page()
        for name, document in documents.items():
            await tab.set_content(document, wait_until="load")
            await tab.pdf(path=str(out / name), prefer_css_page_size=True,
                          print_background=True, tagged=True)
        await browser.close()


def assemble(out: Path, printed: list[Printed], edition: str, version: str,
             chromium: Path) -> int:
    """Write ``book.pdf`` (title, contents, every page, bookmarks, page numbers) and stamp each
    page's own PDF with "k / n"; returns the book's page count."""
    work = out / "_work"
    work.mkdir(exist_ok=True)
    # the contents' length does not depend on the numbers in it: lay it out once to count
    asyncio.run(_print_html({"front.pdf": front_matter_html(printed, [0] * len(printed),
                                                            edition, version)}, work, chromium))
    front = len(PdfReader(work / "front.pdf").pages)
    first_pages, next_page = [], front + 1
    for page in printed:
        first_pages.append(next_page)
        next_page += page.pages
    total = next_page - 1
    documents = {"front.pdf": front_matter_html(printed, first_pages, edition, version),
                 "book_numbers.pdf": numbers_html([""] * front
                                                  + [str(k) for k in range(front + 1, total + 1)])}
    for page in printed:
        documents[f"{page.stem}_numbers.pdf"] = numbers_html(
            [f"{k} / {page.pages}" for k in range(1, page.pages + 1)])
    asyncio.run(_print_html(documents, work, chromium))
    if len(PdfReader(work / "front.pdf").pages) != front:
        raise RuntimeError("the table of contents changed length when its numbers were filled in")

    book = PdfWriter()
    book_numbers = PdfReader(work / "book_numbers.pdf")
    book.append(PdfReader(work / "front.pdf"))
    label_pages = iter(book_numbers.pages[front:])
    parts: dict[str, object] = {}
    for page, first in zip(printed, first_pages, strict=True):
        raw = (out / f"{page.stem}.pdf").read_bytes()
        for sheet in PdfReader(io.BytesIO(raw)).pages:
            book.add_page(sheet).merge_page(next(label_pages))
        # cloned whole, so the page keeps Chromium's tags (structure, alt text, outline)
        single = PdfWriter(clone_from=io.BytesIO(raw))
        labels = PdfReader(work / f"{page.stem}_numbers.pdf").pages
        for sheet, label in zip(single.pages, labels, strict=True):
            sheet.merge_page(label)
        single.add_metadata({"/Title": f"{page.title} (Shuffle Privacy)"})
        with open(out / f"{page.stem}.pdf", "wb") as handle:
            single.write(handle)
        parent = None
        if page.part:
            if page.part not in parts:
                parts[page.part] = book.add_outline_item(title=page.part, page_number=first - 1)
            parent = parts[page.part]
        book.add_outline_item(title=page.title, page_number=first - 1, parent=parent)
    book.add_metadata({"/Title": f"Shuffle Privacy ({edition} edition)"})
    book.page_mode = "/UseOutlines"
    with open(out / "book.pdf", "wb") as handle:
        book.write(handle)
    shutil.rmtree(work)
    return total


def build(site: Path, edition: str, base_url: str = "", chromium: Path = CHROMIUM,
          root: Path = ROOT) -> dict[str, object]:
    """Print every page of ``site`` into ``site/_pdf`` and assemble the book; returns the
    manifest (also written to ``_pdf/manifest.json``)."""
    if not (site / "index.html").is_file():
        raise SystemExit(f"no built website at {site}: run `make book` first")
    if not chromium.is_file():
        raise SystemExit(f"no Chromium at {chromium}, which prints the PDF: install it (Debian: "
                         "apt-get install chromium, as .ci/run does) or set CHROMIUM to a "
                         "Chromium or Chrome executable")
    sys.path.insert(0, str(root))
    from shuffle_lib import __version__

    out = site / "_pdf"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    start = time.monotonic()
    pages = [page for page in book_pages(root) if (site / f"{page.docname}.html").is_file()]
    printed = asyncio.run(_print_all(site, pages, out, base_url, chromium))
    total = assemble(out, printed, edition, __version__, chromium)
    manifest = {"edition": edition, "book_pages": total,
                "seconds": round(time.monotonic() - start, 1),
                "pages": [asdict(page) for page in printed]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def main() -> None:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--edition", choices=("instructor", "student"), default="instructor")
    parser.add_argument("--base-url", default="",
                        help="where the website is hosted: links to other pages go there "
                             "(default: they become plain text)")
    parser.add_argument("--chromium", type=Path, default=CHROMIUM)
    args = parser.parse_args()
    base_url = args.base_url if not args.base_url or args.base_url.endswith("/") \
        else args.base_url + "/"
    manifest = build(args.site, args.edition, base_url, args.chromium)
    print(f"{args.site / '_pdf' / 'book.pdf'}: {manifest['book_pages']} pages, "
          f"{len(manifest['pages'])} page PDFs, {manifest['seconds']} s")


if __name__ == "__main__":
    main()
