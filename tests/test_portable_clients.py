"""The portable notebooks (``tools/portable_notebooks.py``) in clients that know nothing of MyST.

Every chapter of the built book is exported once per session (both editions) into a temporary
folder, then:

1. **Rendered by nbconvert, shown in Chromium.** Each notebook becomes HTML through nbconvert's
   ``HTMLExporter`` (its default "lab" template), with ``mathjax_url`` pointing at the vendored
   MathJax 3.2.2 (``_vendor/mathjax/tex-chtml.js``) on a local HTTP server, and **no macro
   table**: the exporter must have expanded the book's macros. Headless Chromium (Playwright,
   ``/usr/bin/chromium``) loads every page with every request that is not to the local server
   blocked, waits for MathJax (``MathJax.startup.promise``), and runs the website test's probe
   (``tests/mathjax_probe.py``) and a MyST probe. A page fails on: raw MyST in the rendered
   markdown (a ```` ```{directive} ```` fence, ``{role}`` text such as ``{glue:text}``,
   ``{ref}``, ``{prf:ref}``, ``{cite:p}``, ``{numref}``, directive options such as ``:label:``,
   ``(label)=`` targets, ``:::`` fences, ``+++`` cell markers, ``{{ substitutions }}``); a
   MathJax error; an undefined macro; TeX delimiters left untypeset outside code; no typeset
   formula although the notebook has ``$`` math; a JavaScript exception or console error; a
   request that needed the network (nbconvert's own optional libraries excepted: require.js,
   mermaid and jQuery, for outputs these unexecuted notebooks do not have). TeX commands left in
   the text outside math (``\\alpha`` outside ``$...$``) also fail, which the website's probe
   alone would miss when no ``$\\macro`` starts the leftover. One synthetic page of raw MyST
   goes through the same probes first, to show that they see what they must; and the chapter on
   amplification by shuffling must show its main theorem as "**Theorem 6.1** (Amplification by
   shuffling)." with the number and title the website gives that label.

   nbconvert's template configures MathJax 2 (a ``text/x-mathjax-config`` block that MathJax 3
   ignores); the same settings (``$`` and ``\\(`` inline math, ``$$`` and ``\\[`` display math,
   escapes, environments, AMS numbering) are given to MathJax 3 in ``MATHJAX_CONFIG_JS``, the
   delimiters JupyterLab's MathJax 3 also uses. No macro is defined there.

   Measured here (2 cores, load average 5-10 from other work): export 9 s; 50 pages, about
   13,000 formulas, checked in 130-195 s, with nbconvert (two processes) converting while the
   browser checks; 3-4 min in all. Most of it is MathJax: loading it and typesetting.

2. **Executed in a fresh virtual environment.** The wheel is built offline (as in
   ``test_wheel.py``) and installed with its ``notebooks`` extra and ``ipykernel`` from the
   package index (pip's ordinary configuration) into a new venv, constrained by
   ``requirements.lock``. The venv must not import ``jupyter_book``, ``myst_nb`` or ``sphinx``,
   must import ``shuffle_lib`` from its own site-packages, and must import every module the
   chapters of the numbered parts import. Then one instructor notebook per part of ``_toc.yml``
   (``EXECUTED``), and the first with an ipywidgets explorer (``EXPLORER``: it must display a
   widget view), runs top to bottom with nbclient, in a kernel started from the venv's python
   (``ipykernel install --prefix``, found through ``JUPYTER_PATH``), working directory outside
   the repository, ``MPLBACKEND=Agg``. The install time and each notebook's run time are printed
   (``pytest -s``). Measured here on the same busy machine, from the local package index:
   install 95 s; local_dp 8 s, amplification 15 s, gspa 8 s, dsigma/definition 75 s,
   profile/definition 16 s, swapping/definition 81 s, audit/audits 25 s; 5.5 min in all.

Marker ``book`` (needs ``_build/html`` and ``_build/jupyter_execute``).
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import functools
import html
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
import yaml
from mathjax_probe import INSPECT_JS
from project_tools import build_wheel, load_tool, problem_report

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
MATHJAX = ROOT / "_vendor" / "mathjax"
MATHJAX_URL = "/_vendor/mathjax/tex-chtml.js"  # on the local server
WORKERS = 3  # pages loaded at once
PAGE_TIMEOUT_MS = 90_000
CELL_TIMEOUT = 900  # seconds per cell; the slowest chapter cell takes about a minute here
KERNEL_NAME = "portable-test"
CONVERTERS = 2  # nbconvert worker processes

# nbconvert's MathJax 2 settings (lab template, ``mathjax.html.j2``) for MathJax 3; no macros.
MATHJAX_CONFIG_JS = r"""
window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\(', '\\)']], displayMath: [['$$', '$$'], ['\\[', '\\]']],
        processEscapes: true, processEnvironments: true, tags: 'ams'},
};
"""

# The chapter, label and expected form of the positive check on a numbered theorem.
THEOREM_CHAPTER = "clones_amplification"
THEOREM_LABEL = "thm-fmt21"
THEOREM_PAGE = SITE / "book" / "clones" / "amplification.html"

# Runs after INSPECT_JS, in a page made by nbconvert: raw MyST in the rendered markdown cells
# (outside typeset math, highlighted code and inline code), and the text after ``label``'s anchor.
MYST_PROBE_JS = r"""
(label) => {
  const names = 'glue(?::\\w+)?|ref|numref|eq|doc|term|download|abbr|eval|math|cite(?::\\w+)?|' +
    'prf:\\w+|admonition|exercise|solution|note|warning|tip|important|hint|seealso|dropdown|' +
    'figure|image|code-cell|list-table|table|margin|sidebar|tab-set|tab-item|card|toctree|' +
    'bibliography|glossary|raw|only|include|literalinclude|code-block|epigraph|topic';
  const patterns = [
    ['directive fence', /```\s*\{|~~~\s*\{/],
    ['MyST role or directive name', new RegExp(`\\{(${names})\\}|\\{(glue|cite|prf):`)],
    ['TeX outside math', /\\[A-Za-z]+/],
    ['directive option', /^\s*:[a-z][\w-]*:(\s|$)/m],
    ['target (label)=', /(^|\s)\([\w.:-]+\)=/],
    ['colon fence', /:::/],
    ['cell marker +++', /^\s*\+\+\+/m],
    ['substitution {{', /\{\{/],
    ['MyST comment', /^% /m],
  ];
  const found = [];
  const cells = document.querySelectorAll('.jp-MarkdownCell');
  cells.forEach((cell, k) => {
    const rendered = cell.querySelector('.jp-RenderedMarkdown');
    if (!rendered) return;
    for (const code of rendered.querySelectorAll('code[class*="language-{"]')) {
      found.push(`markdown cell ${k}: directive fence shown as code: ` +
                 code.textContent.slice(0, 80).replace(/\s+/g, ' '));
    }
    // a role: "{name}" right before the inline code that held its argument
    for (const code of rendered.querySelectorAll(':not(pre) > code')) {
      const before = code.previousSibling;
      const role = before && before.nodeType === Node.TEXT_NODE
        && before.nodeValue.match(/\{[a-z][\w-]*(?::[\w-]+)*\}$/);
      if (role) found.push(`markdown cell ${k}: role ${role[0]} before \`${code.textContent}\``);
    }
    const copy = rendered.cloneNode(true);
    // typeset math, highlighted code of a known language, inline code (a role's argument)
    for (const e of copy.querySelectorAll(
        'mjx-container, script, style, .highlight, :not(pre) > code, a.anchor-link')) {
      e.remove();
    }
    const text = copy.textContent;
    for (const [what, pattern] of patterns) {
      const at = text.search(pattern);
      if (at >= 0) {
        found.push(`markdown cell ${k}: ${what}: ...` +
                   text.slice(Math.max(0, at - 40), at + 60).replace(/\s+/g, ' ') + '...');
      }
    }
  });
  let theorem = null;
  const anchor = label && document.getElementById(label);
  if (anchor) {
    const range = document.createRange();
    range.setStartAfter(anchor);
    range.setEndAfter(anchor.closest('.jp-RenderedMarkdown').lastChild);
    const after = range.cloneContents();
    for (const e of after.querySelectorAll('mjx-assistive-mml')) e.remove();
    const strong = after.querySelector('strong');
    theorem = {strong: strong && strong.textContent,
               text: after.textContent.trim().replace(/\s+/g, ' ').slice(0, 200)};
  }
  return {cells: cells.length, found, theorem};
}
"""

# A markdown cell of raw MyST, as the chapters' sources have it: the probes must flag each line.
CANARY = r"""(sec-canary)=
# Canary with $\eps_0$ and {ref}`sec-canary`

````{prf:theorem} Amplification
:label: thm-canary

It is {glue:text}`bridge:.4f` by {cite:p}`feldman2021` and {prf:ref}`thm-canary`.
````

$$\Hockey{\eps}(P \Vert Q) = \begin{cases} 1 \end{cases}$$

A line of inline math that starts with a minus sign, $a \le b
- c$, breaks into a list item.
"""


portable = load_tool("portable_notebooks")


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every chapter exported once, ``<tmp>/{instructor,student}/<part>_<chapter>.ipynb``."""
    if not (SITE / "objects.inv").is_file():
        pytest.fail("the book is not built: run `make book` first")
    out = tmp_path_factory.mktemp("portable")
    portable.export(ROOT, out, portable.DEFAULT_BASE_URL)
    return out


def _notebook_name(chapter: str) -> str:
    """``book/clones/amplification`` -> ``clones_amplification.ipynb`` (the exporter's name)."""
    return "_".join(Path(chapter).relative_to("book").parts) + ".ipynb"


def _parts() -> dict[str, list[str]]:
    """The numbered parts of ``_toc.yml``: ``{caption: [chapter files]}``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return {part["caption"]: [chapter["file"] for chapter in part["chapters"]]
            for part in toc["parts"] if part.get("numbered")}


def _has_code(chapter: str) -> bool:
    """Whether the chapter (``book/clones/amplification``) is a MyST notebook with code cells."""
    source = ROOT / f"{chapter}.md"
    return source.is_file() and re.search(r"^```\{code-cell\}", source.read_text(
        encoding="utf-8"), re.MULTILINE) is not None


# --- 1. nbconvert's HTML in Chromium ----------------------------------------------------------

@dataclass(frozen=True)
class Rendered:
    origin: str  # the local server, http://127.0.0.1:PORT
    pages: dict[str, concurrent.futures.Future]  # page (instructor/x.html) -> its conversion
    libraries: set[str]  # nbconvert's own optional libraries (require.js, mermaid, jQuery)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the browser closing a connection early


@functools.cache
def _html_exporter():  # one per worker process
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="lab", mathjax_url=MATHJAX_URL)


def _convert(notebook: Path, target: Path) -> None:
    """nbconvert's HTML of ``notebook`` (default "lab" template, the vendored MathJax)."""
    body, _ = _html_exporter().from_notebook_node(nbformat.read(notebook, as_version=4))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")


@pytest.fixture(scope="module")
def rendered(exported: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rendered]:
    """Every exported notebook and the canary, converted to HTML by nbconvert in two worker
    processes (while the browser checks the pages already converted), served on a free local
    port with the vendored MathJax."""
    served = tmp_path_factory.mktemp("nbconvert")
    (served / "_vendor").mkdir()
    (served / "_vendor" / "mathjax").symlink_to(MATHJAX, target_is_directory=True)
    canary = served / "canary.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(CANARY)]),
                   canary)
    sources = {"canary.html": canary} | {
        path.relative_to(exported).with_suffix(".html").as_posix(): path
        for path in sorted(exported.glob("*/*.ipynb"), key=lambda p: -p.stat().st_size)}
    exporter = _html_exporter()
    # libraries the template loads for outputs these unexecuted notebooks do not have (widgets,
    # mermaid diagrams): blocked like everything else, but not the exporter's fault
    libraries = {exporter.require_js_url, exporter.mermaid_js_url, exporter.jquery_url}
    with concurrent.futures.ProcessPoolExecutor(max_workers=CONVERTERS) as pool:
        # the workers are forked here, before the server's thread exists
        pages = {name: pool.submit(_convert, source, served / name)
                 for name, source in sources.items()}
        handler = functools.partial(_QuietHandler, directory=str(served))
        httpd = _QuietServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield Rendered(f"http://127.0.0.1:{httpd.server_address[1]}", pages, libraries)
        for future in pages.values():
            future.cancel()
    httpd.shutdown()
    httpd.server_close()


async def _check_page(context, origin: str, name: str, converted: concurrent.futures.Future,
                      libraries: set[str], label: str | None) -> tuple[list[str], dict]:
    """Once nbconvert has written it, load one page with every non-local request blocked;
    returns its problems and the two probes' reports (``{"inspect": ..., "myst": ...}``)."""
    problems: list[str] = []
    blocked: list[str] = []

    async def block(route) -> None:
        blocked.append(route.request.url)
        await route.abort("blockedbyclient")

    def console(message) -> None:
        if message.type == "error" and message.location.get("url") not in libraries:
            problems.append(f"console error: {message.text} "
                            f"({message.location.get('url', '')}:"
                            f"{message.location.get('lineNumber')})")

    try:
        await asyncio.wrap_future(converted)
    except Exception as error:
        return [f"nbconvert failed: {error!r}"], {}
    page = await context.new_page()
    await page.route(re.compile(rf"^(?!{re.escape(origin)}/)"), block)
    await page.add_init_script(MATHJAX_CONFIG_JS)
    page.on("console", console)
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(
        f"HTTP {r.status}: {r.url.removeprefix(origin)}"))
    try:
        await page.goto(f"{origin}/{name}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        reports = {"inspect": await page.evaluate(INSPECT_JS),
                   "myst": await page.evaluate(MYST_PROBE_JS, label)}
    except Exception as error:  # a timeout or a crash: this page's problem, check the others
        return [*problems, f"could not be checked: {error}"], {}
    finally:
        await page.close()
    report = reports["inspect"]
    if not report["mathjax"]:
        problems.append("MathJax did not load")
    problems += [f"MathJax error: {text}" for text in report["merrors"]]
    problems += [f"undefined TeX macro: {m}" for m in sorted(set(report["undefinedMacros"]))]
    problems += [f"untypeset TeX: ...{snippet}..." for snippet in report["untypeset"]]
    problems += [f"image did not load: {src}" for src in report["badImages"]]
    problems += [f"raw MyST: {found}" for found in reports["myst"]["found"]]
    problems += [f"needed the network (blocked): {url}" for url in dict.fromkeys(blocked)
                 if url not in libraries]
    return problems, reports


async def _check_pages(chromium: Path, rendered: Rendered,
                       labels: dict[str, str]) -> tuple[dict, dict, dict]:
    """Every page, ``WORKERS`` at a time (in the order nbconvert converts them), in one
    browser: ``({page: problems}, {page: reports}, {page: seconds})``."""
    from playwright.async_api import async_playwright

    problems: dict[str, list[str]] = {}
    reports: dict[str, dict] = {}
    seconds: dict[str, float] = {}
    queue = list(reversed(rendered.pages))
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(chromium), headless=True)
        context = await browser.new_context(viewport={"width": 1280, "height": 900},
                                            service_workers="block")

        async def worker() -> None:
            while queue:
                name = queue.pop()
                start = time.monotonic()
                found, reports[name] = await _check_page(
                    context, rendered.origin, name, rendered.pages[name], rendered.libraries,
                    labels.get(name))
                seconds[name] = time.monotonic() - start
                if found:
                    problems[name] = found

        await asyncio.gather(*(worker() for _ in range(WORKERS)))
        await context.close()
        await browser.close()
    return problems, reports, seconds


def _has_math(notebook_path: Path) -> bool:
    notebook = nbformat.read(notebook_path, as_version=4)
    return any(cell.cell_type == "markdown" and portable.MATH.search(cell.source)
               for cell in notebook.cells)


def _website_theorem() -> tuple[str, str]:
    """The number and title the website gives ``THEOREM_LABEL`` ("Theorem 6.1",
    "Amplification by shuffling"), read from its page."""
    page = THEOREM_PAGE.read_text(encoding="utf-8")
    match = re.search(rf'id="{THEOREM_LABEL}">\s*<p class="admonition-title">'
                      r'<span class="caption-number">([^<]*?)\s*</span>\s*\(([^<]*)\)</p>', page)
    assert match, f"no numbered block {THEOREM_LABEL} in {THEOREM_PAGE}"
    return html.unescape(match.group(1)), html.unescape(match.group(2))


def test_every_exported_notebook_renders_in_nbconvert_html_without_myst_or_tex_errors(
        exported: Path, rendered: Rendered, chromium: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """nbconvert's HTML of both editions of every chapter, in Chromium with MathJax 3 and no
    macro table: no raw MyST, no TeX error, no undefined macro, no untypeset TeX, formulas
    typeset wherever the notebook has math, no JavaScript error, nothing from the network."""
    start = time.monotonic()
    notebooks = {path.relative_to(exported).with_suffix(".html").as_posix(): path
                 for path in sorted(exported.glob("*/*.ipynb"))}
    chapters = [_notebook_name(f) for files in _parts().values() for f in files if _has_code(f)]
    exported_names = {path.name for path in notebooks.values()}
    assert len(notebooks) > 40, f"only {len(notebooks)} notebooks exported"
    assert THEOREM_CHAPTER + ".ipynb" in exported_names
    missing = [c for c in chapters if c not in exported_names]
    assert not missing, f"notebook chapters of the numbered parts not exported: {missing}"
    assert set(rendered.pages) == {"canary.html", *notebooks}
    labels = {f"{edition}/{THEOREM_CHAPTER}.html": THEOREM_LABEL
              for edition in portable.EDITIONS}
    problems, reports, seconds = asyncio.run(
        _check_pages(chromium, rendered, labels))

    # the probes see raw MyST, undefined macros and untypeset TeX when they are there
    canary = "\n".join(problems.pop("canary.html", []))
    for expected in ("directive fence shown as code: {prf:theorem}", "directive option",
                     "target (label)=", "role {ref} before", "TeX outside math",
                     "undefined TeX macro: \\eps",
                     "undefined TeX macro: \\Hockey"):
        assert expected in canary, f"the probes missed {expected!r} on the canary:\n{canary}"
    for name, path in notebooks.items():
        report = reports.get(name, {}).get("inspect")
        if report and report["mathjax"] and _has_math(path) and not report["formulas"]:
            problems.setdefault(name, []).append("has $ math but MathJax typeset no formula")
        if report is not None and not reports[name]["myst"]["cells"]:
            problems.setdefault(name, []).append("no markdown cell rendered")

    # the numbered block, as the website numbers and titles it
    number, title = _website_theorem()
    for name, label in labels.items():
        theorem = reports.get(name, {}).get("myst", {}).get("theorem")
        if not theorem or theorem["strong"] != number or not theorem["text"].startswith(
                f"{number} ({title})."):
            problems.setdefault(name, []).append(
                f"after the anchor {label}: {theorem}, not **{number}** ({title}).")
    formulas = sum(r["inspect"]["formulas"] for r in reports.values() if r)
    slowest = ", ".join(f"{name} {t:.1f} s" for name, t in
                        sorted(seconds.items(), key=lambda item: -item[1])[:3])
    with capsys.disabled():
        print(f"\n{len(notebooks)} nbconvert pages checked in Chromium, {formulas} formulas, "
              f"in {time.monotonic() - start:.0f} s (slowest: {slowest})")
    assert not problems, problem_report(problems, "notebooks")


# --- 2. Executed in a fresh virtual environment -----------------------------------------------

def _run(args: list, **options: object) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=1800,
                          **options)
    assert done.returncode == 0, (f"{' '.join(map(str, args))} failed:\n"
                                  f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def _clean_environment(venv: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without the project's venv, ``PYTHONPATH`` or user site, with
    the new venv first on ``PATH``."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV",
               "JUPYTER_PATH", "MPLBACKEND")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    project_bin = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != project_bin]
    env.update(PATH=os.pathsep.join([str(venv / "bin"), *path]), PYTHONNOUSERSITE="1", **extra)
    return env


def _imports(notebook: nbformat.NotebookNode) -> set[str]:
    """Top-level modules imported by the notebook's code cells (absolute imports)."""
    modules = set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.add(node.module.split(".")[0])
    return modules


def _executed_notebooks() -> dict[str, str]:
    """One instructor notebook per numbered part of ``_toc.yml``: its first chapter with code
    cells (``{part caption: notebook file name}``); the parts' index pages have none."""
    return {caption: _notebook_name(next(f for f in files if _has_code(f)))
            for caption, files in _parts().items()}


EXECUTED = _executed_notebooks()


def _explorer_notebook() -> str:
    """The first chapter of the numbered parts with an ``ipywidgets`` explorer."""
    for files in _parts().values():
        for chapter in files:
            if _has_code(chapter) and re.search(
                    r"^(import|from) ipywidgets\b",
                    (ROOT / f"{chapter}.md").read_text(encoding="utf-8"), re.MULTILINE):
                return _notebook_name(chapter)
    raise AssertionError("no chapter has an ipywidgets explorer")


EXPLORER = _explorer_notebook()
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# Runs in the venv: what is importable, and where shuffle_lib comes from.
VENV_PROBE = """
import importlib.util, json, sys
import shuffle_lib
modules = json.loads(sys.argv[1])
print(json.dumps({"shuffle_lib": shuffle_lib.__file__, "prefix": sys.prefix,
                  "found": {m: importlib.util.find_spec(m) is not None for m in modules}}))
"""


def test_one_notebook_per_part_runs_in_a_fresh_venv_with_only_the_wheel_and_its_extras(
        exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A venv with only ``shuffle_lib[notebooks]`` (the wheel) and ``ipykernel``, pinned by
    ``requirements.lock``: no book toolchain in it, every module the numbered parts' chapters
    import available, and one instructor notebook per part (``EXECUTED``), plus the first with
    an ipywidgets explorer (``EXPLORER``, which must display a widget view), runs top to bottom
    in its kernel, outside the repository. Prints the install and run times."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from nbconvert.filters import strip_ansi

    assert len(EXECUTED) == len(_parts()) >= 7, EXECUTED
    # the extra is declared without pins, and every name in it is pinned in the lock
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]["notebooks"]
    lock = {re.split(r"[=<>~!\s;\[]", line)[0].lower().replace("_", "-") for line in
            (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith(("#", "-"))}
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+", name) for name in extra), extra
    assert not [n for n in extra if n.lower().replace("_", "-") not in lock], (extra, lock)

    wheel = build_wheel(tmp_path)  # offline, from a copy of the sources

    work = tmp_path / "work"  # the notebooks' working directory, outside the repository
    work.mkdir()
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    env = _clean_environment(venv)
    start = time.monotonic()
    _run([sys.executable, "-m", "venv", venv], cwd=work, env=env)
    _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          f"{wheel}[notebooks]", "ipykernel", "-c", ROOT / "requirements.lock"],
         cwd=work, env=env)
    install_seconds = time.monotonic() - start
    _run([python, "-m", "ipykernel", "install", "--prefix", venv, "--name", KERNEL_NAME],
         cwd=work, env=env)

    # the venv has the library, what the chapters import, and nothing of the book's toolchain
    chapters = [_notebook_name(f) for files in _parts().values() for f in files if _has_code(f)]
    needed = set().union(*(_imports(nbformat.read(path, as_version=4))
                           for path in sorted((exported / "instructor").glob("*.ipynb"))
                           if path.name in chapters))
    toolchain = ["jupyter_book", "myst_nb", "sphinx", "jupytext", "jupyterlab_myst"]
    probe = json.loads(_run([python, "-c", VENV_PROBE, json.dumps(sorted(needed) + toolchain)],
                            cwd=work, env=env).stdout)
    assert Path(probe["shuffle_lib"]).is_relative_to(venv), probe["shuffle_lib"]
    assert Path(probe["prefix"]) == venv
    present = [m for m in toolchain if probe["found"][m]]
    assert not present, f"the book's toolchain is importable in the fresh venv: {present}"
    absent = sorted(m for m in needed if not probe["found"][m])
    assert not absent, f"the chapters import modules the wheel and its extras lack: {absent}"

    # the kernel: the venv's python, found through JUPYTER_PATH
    monkeypatch.setenv("JUPYTER_PATH", str(venv / "share" / "jupyter"))
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    assert Path(spec.argv[0]) == python, spec.argv
    kernel_env = _clean_environment(venv, MPLBACKEND="Agg")
    where = ("import sys, shuffle_lib, matplotlib, os\n"
             "print(sys.executable, shuffle_lib.__file__, matplotlib.get_backend(), os.getcwd())")
    failures, times = [], {}
    for caption, name in {**EXECUTED, "explorer": EXPLORER}.items():
        notebook = nbformat.read(exported / "instructor" / name, as_version=4)
        notebook.cells.append(nbformat.v4.new_code_cell(where))  # where it ran
        client = NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name=KERNEL_NAME,
                                resources={"metadata": {"path": str(work)}})
        started = time.monotonic()
        try:
            client.execute(env=kernel_env)
        except CellExecutionError as error:
            (k, cell) = next((k, c) for k, c in enumerate(notebook.cells)
                             if c.cell_type == "code" and any(
                                 o.output_type == "error" for o in c.get("outputs", [])))
            failures.append(f"{caption}: {name} cell {k}:\n{cell.source[:600]}\n"
                            f"{strip_ansi(str(error))[-1500:]}")
            continue
        finally:
            times[name] = time.monotonic() - started
        printed = "".join(o.get("text", "") for o in notebook.cells[-1].outputs).split()
        assert printed[0] == str(python) and Path(printed[1]).is_relative_to(venv), printed
        assert printed[2].lower() == "agg" and Path(printed[3]) == work, printed
        if caption == "explorer":  # the kernel made the explorer's widgets (a view to display)
            views = [o for c in notebook.cells if c.cell_type == "code"
                     for o in c.get("outputs", []) if WIDGET_VIEW in o.get("data", {})]
            assert views, f"{name}: no ipywidgets view among the outputs"

    with capsys.disabled():
        print(f"\nfresh venv: wheel[notebooks] + ipykernel installed in {install_seconds:.0f} s; "
              "executed: " + ", ".join(f"{name} {t:.0f} s" for name, t in times.items()))
    assert not failures, "\n\n".join(failures)
