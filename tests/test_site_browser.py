"""The built website, offline, in a real browser (run after `jupyter-book build`; ``make test``).

Every HTML page of ``_build/html`` is served from a local HTTP server and loaded in headless
Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright; set ``CHROMIUM`` to use another
binary). Every request that leaves the local server is blocked, so the test proves that the site
works without internet. A page fails on:

- a request to anything but the local server, a local file that is missing (HTTP 4xx/5xx), a
  console error or an uncaught JavaScript exception;
- math that MathJax did not typeset: MathJax missing on a page with math, a TeX error
  (``mjx-merror``), an undefined macro (shown in red by MathJax), or LaTeX delimiters left in
  the visible text (``\\(``, ``\\[``, ``$$``, ``\\begin{``, ``$\\macro``) outside code;
- an image that does not load (``naturalWidth`` 0), or a saved widget (a tqdm progress bar) that
  the widget manager did not draw;
- a formula without MathJax's assistive MathML (the hidden ``<math>`` copy a screen reader reads);
- a serious or critical accessibility violation found by axe-core (``tests/assets/axe.min.js``,
  injected once the page has loaded and MathJax has typeset it). The counts of every impact are
  printed per page.

Internal links are checked without the browser (stdlib ``html.parser``): the target file exists
and, for ``page.html#anchor``, the target page has that id; resources (scripts, stylesheets,
images) must not come from the network; every ``<img>`` has a text alternative that is neither
empty nor a file name. One full-page screenshot per part of ``_toc.yml`` (its
first notebook chapter, else its first page) goes to ``_build/screenshots/`` for humans to look
at. ``SHUFFLE_SITE=/path/to/html`` checks another build (screenshots go next to it).

Without Chromium or Playwright the browser test is skipped, and the reason appears in the
``make test`` summary (pytest ``-rs``); the link check still runs.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from mathjax_probe import INSPECT_JS
from project_tools import problem_report

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("SHUFFLE_SITE", ROOT / "_build" / "html")).resolve()
SCREENSHOTS = SITE.parent / "screenshots"  # _build/screenshots for the default site
PAGE_TIMEOUT_MS = 90_000  # a loaded 2-core machine typesets the longest chapter in a few seconds
WORKERS = 2  # pages loaded at once (Chromium renders each in its own process)
# Tags and attributes whose URL the browser fetches while rendering the page.
RESOURCE_ATTRS = {("script", "src"), ("img", "src"), ("source", "src"), ("iframe", "src"),
                  ("embed", "src"), ("object", "data"), ("video", "src"), ("audio", "src")}
RESOURCE_RELS = {"stylesheet", "icon", "preload", "modulepreload", "prefetch", "manifest"}
# axe-core, the accessibility checker (version, licence, checksum: tests/assets/README.md)
AXE = ROOT / "tests" / "assets" / "axe.min.js"
AXE_FAILS = ("critical", "serious")  # impacts that fail a page; "moderate" and "minor" are counted
AXE_IMPACTS = ("critical", "serious", "moderate", "minor")
# Violations not counted, as (rule id, CSS selector, why): a node of that rule inside an element
# that matches the selector. Only for markup of the theme that configuration cannot change.
AXE_EXCLUDED: tuple[tuple[str, str, str], ...] = ()


# --- Static checks: links, anchors and resources, read from the HTML files --------------------

@dataclass
class ParsedPage:
    ids: set[str] = field(default_factory=set)
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attribute, url)
    external_resources: list[str] = field(default_factory=list)
    images: list[tuple[str, str | None]] = field(default_factory=list)  # (src, alt)
    redirect: str | None = None  # <meta http-equiv="refresh" content="0; url=...">


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = ParsedPage()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value for name, value in attrs if value is not None}
        if "id" in values:
            self.page.ids.add(values["id"])
        if tag == "a" and "name" in values:
            self.page.ids.add(values["name"])
        if tag == "img":
            self.page.images.append((values.get("src", ""), values.get("alt")))
        if tag == "meta" and values.get("http-equiv", "").lower() == "refresh":
            match = re.search(r"url=(.+)", values.get("content", ""), re.IGNORECASE)
            if match:
                self.page.redirect = match.group(1).strip().strip("'\"")
                self.page.links.append(("meta", "content", self.page.redirect))
        for attribute in ("href", "src", "data"):
            url = values.get(attribute)
            if url is None:
                continue
            rels = set(values.get("rel", "").lower().split())
            is_resource = (tag, attribute) in RESOURCE_ATTRS or (
                tag == "link" and attribute == "href" and rels & RESOURCE_RELS)
            if urlsplit(url).scheme in ("http", "https") or url.startswith("//"):
                if is_resource:
                    self.page.external_resources.append(f"<{tag} {attribute}={url}>")
                continue
            if tag in ("a", "img", "link", "script", "source") or is_resource:
                self.page.links.append((tag, attribute, url))


def _site_pages() -> list[Path]:
    """Every HTML page of the site (not the copies of sources or static assets)."""
    return sorted(p for p in SITE.rglob("*.html")
                  if not p.relative_to(SITE).parts[0].startswith(("_static", "_sources")))


@functools.cache
def _parse(path: Path) -> ParsedPage:
    parser = _Parser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.page


@pytest.fixture(scope="module")
def pages() -> list[Path]:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no website at {SITE}: build the book first (make book)")
    return _site_pages()


def _link_problems(page: Path) -> list[str]:
    parsed = _parse(page)
    problems = [f"loads from the network: {r}" for r in parsed.external_resources]
    for tag, attribute, url in parsed.links:
        parts = urlsplit(url)
        if parts.scheme or url == "#":
            continue  # mailto:, data:, javascript:, or a bare "#" (theme buttons)
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if parts.path.endswith("/") or target.is_dir():
            target = target / "index.html"
        if not target.is_relative_to(SITE):
            problems.append(f"<{tag} {attribute}={url}> points outside the site")
        elif not target.is_file():
            problems.append(f"<{tag} {attribute}={url}>: no file {target.relative_to(SITE)}")
        elif parts.fragment and target.suffix == ".html":
            if unquote(parts.fragment) not in _parse(target).ids:
                problems.append(f"<{tag} {attribute}={url}>: no id {parts.fragment!r} in "
                                f"{target.relative_to(SITE)}")
    return problems


def test_internal_links_anchors_and_images_resolve_offline(pages: list[Path]) -> None:
    problems = {str(page.relative_to(SITE)): found for page in pages
                if (found := _link_problems(page))}
    assert not problems, problem_report(problems, "pages")


class _TextOutsideMath(HTMLParser):
    """The article's text outside math, code, scripts and styles (``texts``)."""

    VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                      "source", "track", "wbr"})
    SKIP = frozenset({"script", "style", "pre", "code", "textarea", "kbd", "samp"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, inside something skipped)
        self.article = 0
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        skipped = bool(self.stack and self.stack[-1][1]) or tag in self.SKIP or bool(
            classes & {"math", "highlight"})
        self.stack.append((tag, skipped))
        self.article += tag == "article"

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID or tag not in (name for name, _ in self.stack):
            return
        while self.stack:
            name, _ = self.stack.pop()
            self.article -= name == "article"
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.article > 0 and not (self.stack and self.stack[-1][1]):
            self.texts.append(data)


TEX_COMMAND = re.compile(r"\\[A-Za-z]{2,}")


def test_no_tex_command_left_in_the_text(pages: list[Path]) -> None:
    """A TeX command in the article's text outside math and code: math that MathJax never sees,
    e.g. a heading with math used as a reference's text, a list marker or a ``$$`` block inside
    a paragraph cutting a formula in two (the browser test's probe only sees leftovers that start
    with ``$\\macro``; the PDF test caught these first)."""
    problems = {}
    for page in pages:
        parser = _TextOutsideMath()
        parser.feed(page.read_text(encoding="utf-8"))
        found = [" ".join(text.split())[:100] for text in parser.texts if TEX_COMMAND.search(text)]
        if found:
            problems[str(page.relative_to(SITE))] = found
    assert not problems, problem_report(problems, "pages")


# A text alternative that is only a file name or path: "../../_images/2d12ab.png", "plot.svg",
# "fig_3", or a long hexadecimal hash (what MyST-NB writes when a cell gives no alt text).
FILE_NAME_ALT = re.compile(
    r"\S*[/\\]\S*|\S+\.(png|jpe?g|gif|svg|webp|pdf)|[\w-]*[0-9a-f]{16,}[\w-]*|[\w.-]*_[\w.-]*",
    re.IGNORECASE)


def _alt_problem(src: str, alt: str | None) -> str | None:
    """Why ``alt`` is not a text alternative for the image at ``src`` (None when it is one)."""
    if alt is None:
        return f"<img src={src}> has no alt attribute"
    text = alt.strip()
    if not text:
        return f"<img src={src}> has an empty alt text"
    file_name = unquote(urlsplit(src).path).rsplit("/", 1)[-1]
    if text in (src, file_name) or FILE_NAME_ALT.fullmatch(text):
        return f"<img src={src}> has a file name as alt text: {alt[:80]!r}"
    return None


def test_every_image_has_a_text_alternative(pages: list[Path]) -> None:
    """Figures are described for screen readers: in the chapters, through each figure cell's
    ``mystnb: image: alt:`` metadata (MyST-NB otherwise writes the image's path as its alt)."""
    problems = {str(page.relative_to(SITE)): found for page in pages
                if (found := [problem for src, alt in _parse(page).images
                              if (problem := _alt_problem(src, alt))])}
    assert not problems, problem_report(problems, "pages")


# --- The browser ------------------------------------------------------------------------------

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the browser closing a connection early (e.g. its favicon request at shutdown)


@pytest.fixture(scope="module")
def server(pages: list[Path]) -> Iterator[str]:
    """The site on a free local port; yields its origin (``http://127.0.0.1:PORT``)."""
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


# Runs after INSPECT_JS (MathJax done) and the injection of axe.min.js: the violations of every
# rule axe-core runs by default (WCAG 2.0-2.2 A and AA, and best practices), one entry per rule
# and impact, with a few target selectors; ``excluded`` is AXE_EXCLUDED.
AXE_RUN_JS = r"""
async (excluded) => {
  const result = await axe.run(document, {resultTypes: ['violations'], elementRef: true});
  const found = {};
  for (const rule of result.violations) {
    for (const node of rule.nodes) {
      if (excluded.some(([id, selector]) => id === rule.id && node.element
                        && node.element.closest(selector))) continue;
      const key = `${rule.id} ${node.impact}`;
      found[key] = found[key] || {id: rule.id, impact: node.impact, help: rule.help,
                                  count: 0, targets: []};
      found[key].count += 1;
      if (found[key].targets.length < 3) found[key].targets.push(node.target.join(' >>> '));
    }
  }
  return {version: axe.version, violations: Object.values(found)};
}
"""


def _screenshot_pages() -> dict[str, str]:
    """One page per part of the table of contents, its first notebook chapter (code, outputs,
    figures) or else its first page: ``{html path: screenshot file name}``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    shots = {}
    for number, part in enumerate(toc["parts"], start=1):
        files = [chapter["file"] for chapter in part["chapters"]]
        notebooks = [f for f in files if (source := ROOT / f"{f}.md").is_file() and re.search(
            r"^kernelspec:", source.read_text(encoding="utf-8"), re.MULTILINE)]
        first = (notebooks or files)[0]  # e.g. book/foundations/local_dp
        name = f"{part['caption'].split(':')[0]} {first.removeprefix('book/')}"
        slug = re.sub(r"[^a-z0-9_]+", "-", name.lower()).strip("-")
        shots[first + ".html"] = f"{number:02d}-{slug}.png"  # 02-part-i-foundations-local_dp.png
    return shots


async def _check_page(context, origin: str, name: str,
                      screenshot: Path | None) -> tuple[list[str], dict]:
    """Load one page with every non-local request blocked; return its problems and axe-core's
    violations (``{"version": ..., "violations": [{id, impact, help, count, targets}]}``)."""
    problems: list[str] = []
    blocked: list[str] = []

    async def block(route) -> None:
        blocked.append(route.request.url)
        await route.abort("blockedbyclient")

    page = await context.new_page()
    # every URL that is not on the local server is refused: nothing comes from the internet
    await page.route(re.compile(rf"^(?!{re.escape(origin)}/)"), block)
    page.on("console", lambda m: m.type == "error" and problems.append(
        f"console error: {m.text} ({m.location.get('url', '')}:{m.location.get('lineNumber')})"))
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(
        f"HTTP {r.status}: {r.url.removeprefix(origin)}"))
    try:
        await page.goto(f"{origin}/{name}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        report = await page.evaluate(INSPECT_JS)
        audit_start = time.monotonic()
        await page.add_script_tag(path=AXE)
        audit = await page.evaluate(AXE_RUN_JS, [list(rule[:2]) for rule in AXE_EXCLUDED])
        audit["seconds"] = time.monotonic() - audit_start
        if screenshot is not None:
            await page.screenshot(path=screenshot, full_page=True)
    except Exception as error:  # a timeout or a crash: this page's problem, check the others
        return [*problems, f"could not be checked: {error}"], {"violations": []}
    finally:
        await page.close()
    if report["mathElements"] and not report["mathjax"]:
        problems.append(f"{report['mathElements']} math elements but MathJax did not load")
    problems += [f"MathJax error: {text}" for text in report["merrors"]]
    problems += [f"undefined TeX macro: {m}" for m in sorted(set(report["undefinedMacros"]))]
    problems += [f"untypeset LaTeX: ...{snippet}..." for snippet in report["untypeset"]]
    problems += [f"image did not load: {src}" for src in report["badImages"]]
    if report["spoken"] < report["formulas"]:
        problems.append(f"{report['formulas'] - report['spoken']} of {report['formulas']} "
                        "formulas without assistive MathML (mjx-assistive-mml)")
    problems += [f"accessibility, {v['impact']}: {v['id']} on {v['count']} elements ({v['help']}),"
                 f" e.g. {'; '.join(v['targets'])}"
                 for v in audit["violations"] if v["impact"] in AXE_FAILS]
    if report["widgetsDrawn"] < report["widgetViews"]:
        problems.append(f"{report['widgetViews']} saved widgets, {report['widgetsDrawn']} drawn "
                        "(the widget manager did not load?)")
    problems += [f"needed the network (blocked): {url}" for url in dict.fromkeys(blocked)]
    audit["formulas"], audit["spoken"] = report["formulas"], report["spoken"]
    return problems, audit


async def _check_site(chromium: Path, origin: str, names: list[str],
                      screenshots: dict[str, Path]) -> tuple[dict[str, list[str]], dict, dict]:
    """Every page, ``WORKERS`` at a time; returns ``({page: problems}, {page: seconds},
    {page: axe-core audit})``."""
    from playwright.async_api import async_playwright

    problems: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}
    audits: dict[str, dict] = {}
    queue = list(reversed(names))
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(chromium), headless=True)
        context = await browser.new_context(viewport={"width": 1280, "height": 900},
                                            service_workers="block")

        async def worker() -> None:
            while queue:
                name = queue.pop()
                start = time.monotonic()
                found, audits[name] = await _check_page(context, origin, name,
                                                        screenshots.get(name))
                seconds[name] = time.monotonic() - start
                if found:
                    problems[name] = found

        await asyncio.gather(*(worker() for _ in range(WORKERS)))
        await context.close()
        await browser.close()
    return problems, seconds, audits


def _audit_summary(audits: dict[str, dict]) -> str:
    """axe-core's violations per page, by impact, with the rules (printed by the browser test)."""
    total = dict.fromkeys(AXE_IMPACTS, 0)
    lines = []
    for name, audit in sorted(audits.items()):
        counts = dict.fromkeys(AXE_IMPACTS, 0)
        for violation in audit["violations"]:
            counts[violation["impact"]] = counts.get(violation["impact"], 0) + violation["count"]
            total[violation["impact"]] = total.get(violation["impact"], 0) + violation["count"]
        rules = ", ".join(f"{v['id']} {v['count']}" for v in sorted(
            audit["violations"], key=lambda v: (AXE_IMPACTS.index(v["impact"]), v["id"])))
        lines.append(f"  {name}: " + ", ".join(f"{impact} {n}" for impact, n in counts.items())
                     + (f" ({rules})" if rules else "")
                     + (f"; {audit['spoken']}/{audit['formulas']} formulas with assistive MathML"
                        if audit.get("formulas") else ""))
    version = next((a["version"] for a in audits.values() if a.get("version")), "?")
    excluded = f", {len(AXE_EXCLUDED)} rule exclusions" if AXE_EXCLUDED else ""
    seconds = sum(audit.get("seconds", 0.0) for audit in audits.values())
    head = (f"axe-core {version} on {len(audits)} pages ({seconds:.0f} s){excluded}: "
            + ", ".join(f"{impact} {n}" for impact, n in total.items()) + " elements")
    return "\n".join([head, *lines])


def test_every_page_works_offline_in_chromium(pages: list[Path], server: str, chromium: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    start = time.monotonic()
    # largest pages first, so that the workers finish together; index.html only redirects
    names = [p.relative_to(SITE).as_posix()
             for p in sorted(pages, key=lambda p: -p.stat().st_size) if _parse(p).redirect is None]
    wanted = _screenshot_pages()
    missing = sorted(set(wanted) - set(names))
    assert not missing, f"table-of-contents pages not in the site: {missing}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    screenshots = {name: SCREENSHOTS / file for name, file in wanted.items()}

    problems, seconds, audits = asyncio.run(_check_site(chromium, server, names, screenshots))

    slowest = ", ".join(f"{name} {t:.1f} s" for name, t in
                        sorted(seconds.items(), key=lambda item: -item[1])[:3])
    with capsys.disabled():  # shown in `make test` output
        print(f"\n{len(names)} pages checked in Chromium in {time.monotonic() - start:.0f} s "
              f"(slowest: {slowest}); {len(screenshots)} screenshots in {SCREENSHOTS}")
        print(_audit_summary(audits))
    assert any(audit.get("spoken") for audit in audits.values()), \
        "no page has a formula with assistive MathML (mjx-assistive-mml) for screen readers"
    assert not problems, problem_report(problems, "pages")
