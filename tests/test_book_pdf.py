"""The book as PDF (``tools/book_pdf.py``), read back with poppler's ``pdftotext``, ``pdfimages``
and ``pdfinfo`` and compared with the website it was printed from.

For each edition that is built (the instructor edition by ``make book`` and ``make test``, marker
``book``; the student edition by ``make student``, marker ``student``) the checks fail on:

- a page of the table of contents without its PDF, or missing from the whole book, or out of
  order there (every page title is looked for in the book's text, in order);
- "??" (an unresolved reference), MyST left as text (``{glue``, ``{ref}``, a directive fence,
  ``:label:``) or TeX left untypeset (a backslash command or ``$...$``) anywhere but in code,
  which the test takes from the website's ``<pre>`` blocks;
- a figure of the website missing from the PDF (the PNG's pixel size is looked for among the
  PDF's images), without its caption ("Fig. 6.1" and the caption's words in the text) or
  without its alt text in the tagged PDF's structure;
- a theorem, definition, algorithm or exercise box of the website whose number is not printed;
- a solution of the website not printed (the instructor edition prints them open), and any
  solution in the student edition.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from book_pdf import book_pages  # noqa: E402  (the tool is not a package)

SITES = {"instructor": ROOT / "_build" / "html",
         "student": ROOT / "_build" / "student" / "_build" / "html"}
EDITIONS = [pytest.param("instructor", marks=pytest.mark.book),
            pytest.param("student", marks=pytest.mark.student)]
RAW_MYST = re.compile(r"```\{|\{glue|\{ref\}|\{prf:ref\}|\{numref\}|\{cite|\{eq\}|:label:|"
                      r"\{doc\}|\{math\}|^\([a-z][\w-]*\)=$", re.MULTILINE)
RAW_TEX = re.compile(r"\\[A-Za-z]{2,}|\$[^$\s][^$]*\$")
BOX = re.compile(r"^(Theorem|Lemma|Definition|Corollary|Proposition|Algorithm|Remark|Example|"
                 r"Conjecture|Exercise) (\d+(?:\.\d+)+)")


class _PageParser(HTMLParser):
    """The article's code text, its figures (``src``, hidden or not) and its box titles."""

    def __init__(self) -> None:
        super().__init__()
        self.code: list[str] = []
        self.figures: list[tuple[str, bool]] = []
        self.boxes: list[str] = []
        self.solutions = 0
        self._pre = 0
        self._hidden: list[bool] = []  # a stack: inside <details class="hide ...">
        self._title: list[str] | None = None
        self._depth_title = 0
        self._in_article = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "article":
            self._in_article = True
        if not self._in_article:
            return
        if tag == "pre":
            self._pre += 1
            self.code.append("")
        if tag == "details":
            self._hidden.append("hide" in classes)
        if tag == "img":
            self.figures.append((attributes.get("src") or "", any(self._hidden)))
        if tag == "p" and "admonition-title" in classes:
            self._title = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._in_article = False
        if tag == "pre" and self._pre:
            self._pre -= 1
        if tag == "details" and self._hidden:
            self._hidden.pop()
        if tag == "p" and self._title is not None:
            title = " ".join("".join(self._title).split())
            if BOX.match(title):
                self.boxes.append(BOX.match(title).group(0))
            self.solutions += title == "Solution"
            self._title = None

    def handle_data(self, data: str) -> None:
        if self._pre:
            self.code[-1] += data
        if self._title is not None:
            self._title.append(data)


@cache
def _page(site: Path, docname: str) -> _PageParser:
    parser = _PageParser()
    parser.feed((site / f"{docname}.html").read_text(encoding="utf-8"))
    return parser


def _text(pdf: Path) -> str:
    done = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                          text=True, check=True)
    return done.stdout


FOOT_TOP = 800.0  # points from the top of an A4 page (842 high): below the 18 mm bottom margin
_PAGE = re.compile(r"<page [^>]*>(.*?)</page>", re.DOTALL)
_WORD = re.compile(r'<word xMin="[^"]*" yMin="([^"]*)" xMax="[^"]*" yMax="([^"]*)">(.*?)</word>')


def _feet(pdf: Path) -> list[str]:
    """The text of each page's foot, where only the page label is printed: the words whose box
    lies wholly below the bottom margin. (A crop by area would also pick up a stretched
    delimiter whose box pdftotext reports as taller than the page.)"""
    done = subprocess.run(["pdftotext", "-enc", "UTF-8", "-bbox", str(pdf), "-"],
                          capture_output=True, text=True, check=True)
    return [" ".join(html.unescape(word) for top, bottom, word in _WORD.findall(page)
                     if float(top) >= FOOT_TOP and float(bottom) <= 842.0 + 1.0)
            for page in _PAGE.findall(done.stdout)]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@dataclass(frozen=True)
class Built:
    edition: str
    site: Path
    out: Path
    manifest: dict


@pytest.fixture(scope="module", params=EDITIONS)
def built(request: pytest.FixtureRequest) -> Built:
    edition = request.param
    site = SITES[edition]
    if shutil.which("pdftotext") is None:
        pytest.fail("poppler's pdftotext is not installed (.ci/run installs poppler-utils)")
    manifest_file = site / "_pdf" / "manifest.json"
    if not manifest_file.is_file():
        pytest.fail(f"no PDF of the {edition} edition ({manifest_file}): `make book` (instructor)"
                    " or `make student` runs tools/book_pdf.py after the website's build")
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    assert manifest["edition"] == edition
    return Built(edition, site, site / "_pdf", manifest)


def test_every_page_has_its_pdf_and_is_in_the_book_in_order(built: Built) -> None:
    expected = [page.docname for page in book_pages(ROOT)]
    printed = [page["docname"] for page in built.manifest["pages"]]
    assert printed == expected, "pages missing from the PDF or out of order"
    assert len(expected) >= 30
    book = PdfReader(built.out / "book.pdf")
    for page in built.manifest["pages"]:
        assert len(PdfReader(built.out / f"{page['stem']}.pdf").pages) == page["pages"]
    front = len(book.pages) - sum(page["pages"] for page in built.manifest["pages"])
    assert 1 <= front <= 4, f"{front} pages of title and contents"
    assert len(book.pages) == built.manifest["book_pages"]
    # bookmarks: one per part, under it one per page
    assert sum(1 + (len(item) if isinstance(item, list) else 0)
               for item in book.outline) >= len(expected)
    text = _squash(_text(built.out / "book.pdf"))
    position = 0
    for page in built.manifest["pages"]:
        found = text.find(_squash(page["title"]), position)
        assert found >= 0, f"the title of {page['docname']} ({page['title']!r}) is not in the " \
                           "book after the previous page's"
        position = found


def _leftovers(text: str, code: str, pattern: re.Pattern[str]) -> list[str]:
    """Lines of ``text`` matching ``pattern`` that are not part of the page's code."""
    code = _squash(html.unescape(code))
    found = []
    for line in text.splitlines():
        if not pattern.search(line):
            continue
        bare = _squash(re.sub(r"^\s*\d+\s", "", line))  # a listing's line number
        if bare and bare not in code:
            found.append(line.strip()[:120])
    return found


def test_no_unresolved_reference_raw_myst_or_raw_tex_outside_code(built: Built) -> None:
    problems = []
    for page in built.manifest["pages"]:
        text = _text(built.out / f"{page['stem']}.pdf")
        code = "\n".join(_page(built.site, page["docname"]).code)
        problems += [f"{page['stem']}: '??' in {line!r}"
                     for line in _leftovers(text, code, re.compile(r"\?\?"))]
        problems += [f"{page['stem']}: MyST {line!r}"
                     for line in _leftovers(text, code, RAW_MYST)]
        problems += [f"{page['stem']}: TeX {line!r}" for line in _leftovers(text, code, RAW_TEX)]
    assert not problems, "\n".join(problems[:40])


def _images(pdf: Path) -> list[tuple[int, int]]:
    done = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True,
                          check=True)
    sizes = []
    for row in done.stdout.splitlines()[2:]:
        fields = row.split()
        if len(fields) > 4 and fields[2] == "image":
            sizes.append((int(fields[3]), int(fields[4])))
    return sizes


def _alt_texts(pdf: Path) -> list[str]:
    reader = PdfReader(pdf)
    tree = reader.trailer["/Root"].get("/StructTreeRoot")
    assert tree is not None, f"{pdf.name} is not a tagged PDF"
    found, stack = [], [tree]
    while stack:
        node = stack.pop().get_object()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if "/Alt" in node:
                found.append(str(node["/Alt"]))
            if "/K" in node:
                stack.append(node["/K"])
    return found


def test_every_figure_is_printed_with_its_caption_and_alt_text(built: Built) -> None:
    problems, figures = [], 0
    for page in built.manifest["pages"]:
        shown = [src for src, hidden in _page(built.site, page["docname"]).figures if not hidden]
        printed = [figure["src"] for figure in page["figures"]]
        if sorted(shown) != sorted(printed):
            problems.append(f"{page['stem']}: the website shows {len(shown)} figures, the PDF "
                            f"printed {len(printed)}")
        if not printed:
            continue
        pdf = built.out / f"{page['stem']}.pdf"
        sizes = _images(pdf)
        text = _squash(_text(pdf))
        alts = {_squash(alt) for alt in _alt_texts(pdf)}
        source = (built.site / page["docname"]).parent
        for figure in page["figures"]:
            figures += 1
            with Image.open((source / figure["src"]).resolve()) as image:
                if image.size not in sizes:
                    problems.append(f"{page['stem']}: {figure['src']} ({image.size}) not among "
                                    "the PDF's images")
            if not figure["alt"] or _squash(figure["alt"]) not in alts:
                problems.append(f"{page['stem']}: {figure['src']} without its alt text")
            caption = figure["caption"]
            number = re.match(r"Fig\. \d+\.\d+", caption)
            words = re.findall(r"[A-Za-z]{5,}", caption)
            if caption and (number is None or _squash(number.group(0)) not in text
                            or sum(_squash(w) in text for w in words) < 0.9 * len(words)):
                problems.append(f"{page['stem']}: caption {caption[:60]!r} not printed")
    assert figures >= 20
    assert not problems, "\n".join(problems)


def test_numbered_boxes_are_printed_and_solutions_follow_the_edition(built: Built) -> None:
    problems, boxes, solutions = [], 0, 0
    for page in built.manifest["pages"]:
        text = _text(built.out / f"{page['stem']}.pdf")
        squashed = _squash(text)
        parsed = _page(built.site, page["docname"])
        for box in parsed.boxes:
            boxes += 1
            if _squash(box) not in squashed:
                problems.append(f"{page['stem']}: {box} not printed")
        printed = sum(line.strip() == "Solution" for line in text.splitlines())
        if printed < parsed.solutions:
            problems.append(f"{page['stem']}: {parsed.solutions} solutions on the website, "
                            f"{printed} printed")
        solutions += printed
    assert boxes >= 200, boxes
    assert not problems, "\n".join(problems)
    if built.edition == "student":
        assert solutions == 0, f"{solutions} solutions in the student edition's PDF"
    else:
        assert solutions >= 100, f"only {solutions} solutions printed in the instructor edition"


def test_each_page_pdf_is_tagged_and_numbered_k_of_n(built: Built) -> None:
    for page in built.manifest["pages"]:
        pdf = built.out / f"{page['stem']}.pdf"
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
        assert re.search(r"^Tagged:\s+yes", info.stdout, re.MULTILINE), pdf.name
        assert [_squash(foot) for foot in _feet(pdf)] == [
            f"{k}/{page['pages']}" for k in range(1, page["pages"] + 1)], pdf.name


def test_no_link_points_at_the_print_server(built: Built) -> None:
    """Links to other pages become text (or go to ``--base-url``): none may point at the local
    server the pages were printed from."""
    problems = []
    for page in built.manifest["pages"]:
        for sheet in PdfReader(built.out / f"{page['stem']}.pdf").pages:
            for annotation in sheet.get("/Annots") or []:
                action = annotation.get_object().get("/A") or {}
                uri = str(action.get("/URI", ""))
                if re.match(r"https?://(127\.0\.0\.1|localhost)[:/]", uri):
                    problems.append(f"{page['stem']}: {uri}")
    assert not problems, "\n".join(problems[:20])


def test_the_book_is_numbered_and_its_contents_point_to_the_pages(built: Built) -> None:
    sheets = _text(built.out / "book.pdf").split("\f")[:built.manifest["book_pages"]]
    front = len(sheets) - sum(page["pages"] for page in built.manifest["pages"])
    assert _feet(built.out / "book.pdf") == [""] * front + [str(k) for k in
                                                            range(front + 1, len(sheets) + 1)]
    contents = "".join(sheets[:front])
    first = front + 1
    for page in built.manifest["pages"]:
        # the contents line ends with the first page; that page starts with the page's title
        assert re.search(re.escape(page["title"][:30]) + r".*?\s" + str(first) + r"\s",
                         contents, re.DOTALL), page["title"]
        assert _squash(page["title"])[:20] in _squash(sheets[first - 1]), page["title"]
        first += page["pages"]


def test_each_page_offers_its_pdf_and_its_portable_notebook(built: Built) -> None:
    """The download menu (tools/page_downloads.py): the page's PDF, the book's, and on notebook
    pages the portable notebook of the same edition (no solution in the student's)."""
    import nbformat

    problems = []
    for page in built.manifest["pages"]:
        document = (built.site / f"{page['docname']}.html").read_text(encoding="utf-8")
        depth = "../" * page["docname"].count("/")
        for target in (f"_pdf/{page['stem']}.pdf", "_pdf/book.pdf"):
            if f'href="{depth}{target}"' not in document:
                problems.append(f"{page['docname']}: no link to {target}")
        source = (ROOT / f"{page['docname']}.md").read_text(encoding="utf-8")
        if re.search(r"^kernelspec:", source, re.MULTILINE):
            notebook = built.site / "_portable" / f"{page['stem']}.ipynb"
            if f'href="{depth}_portable/{page["stem"]}.ipynb"' not in document:
                problems.append(f"{page['docname']}: no link to its portable notebook")
            elif not notebook.is_file():
                problems.append(f"{page['docname']}: {notebook.name} missing")
            else:
                cells = nbformat.read(notebook, as_version=4).cells
                text = "\n".join(cell.source for cell in cells)
                has_solution = "<summary>Solution" in text
                if has_solution != (built.edition == "instructor" and "{solution-start}" in source):
                    problems.append(f"{page['docname']}: solutions in {built.edition} "
                                    f"notebook: {has_solution}")
    assert not problems, "\n".join(problems)
