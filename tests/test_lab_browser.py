"""The chapters in JupyterLab, in a real browser (``make test``; marker ``lab``).

Starts JupyterLab from the project's environment on a free local port (the environment's own
configuration: jupyterlab-myst, Jupytext, the book's contents manager and kernel extension from
``tools/jupyterlab``; user settings, workspaces and runtime files in a temporary folder), opens one
chapter per part in headless Chromium (Debian's ``/usr/bin/chromium`` driven by Playwright, as in
``test_site_browser.py``), runs all its cells and saves it. A chapter fails on

- an error or any stderr output in a cell, or a run that does not finish;
- math that KaTeX could not typeset (jupyterlab-myst logs ``Undefined control sequence``);
- MyST markup left as text in a rendered markdown cell (``:class:``, ``{prf:``, ``{exercise``,
  ``{solution``, ``{glue``, ``{cite``, a code fence) or a glued number that did not fill in;
- solutions not folded when the chapter opens, or opened by running it (a solution's text in a
  closed dropdown, its code cells collapsed);
- a chapter file changed on disk by opening, running and saving it.

One screenshot per chapter (the top, after the run) goes to ``_build/lab-screenshots/``. Without
Chromium or Playwright the test is skipped with the reason in the ``make test`` summary.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jupytext
import pytest

pytestmark = pytest.mark.lab

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "jupyterlab"))
from book_contents import macros_from_config, to_lab  # noqa: E402
from book_kernel import PLACEHOLDER  # noqa: E402

SCREENSHOTS = ROOT / "_build" / "lab-screenshots"
# one chapter per part, the quickest to run of each (make bench lists the notebooks' times)
CHAPTERS = [
    "book/foundations/hypothesis_testing.md",
    "book/clones/applications.md",
    "book/personalized/applications.md",
    "book/dsigma/definition.md",
    "book/profile/definition.md",
    "book/swapping/definition.md",
    "book/audit/audits.md",
]
RUN_TIMEOUT_S = 600  # a runaway ceiling per chapter; they take 5-70 s on an idle machine
RAW_MYST = (":class:", "{prf:", "{exercise", "{solution", "{glue", "{eval}", "{cite", "```",
            "glue_text(", PLACEHOLDER)
# JupyterLab settings for a reproducible run: every cell in the page (no windowing), no news
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def lab(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A JupyterLab server from the project's environment; yields its URL."""
    home = tmp_path_factory.mktemp("lab")
    for name, values in SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces")}
    port = _free_port()
    log = (home / "server.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--allow-root",
         f"--ServerApp.root_dir={ROOT}", "--LabApp.expose_app_in_browser=True"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(120):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"JupyterLab exited: {(home / 'server.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _expected_folds(chapter: str) -> tuple[int, int]:
    """(collapsed code cells, closed dropdowns) of a chapter's solutions in JupyterLab."""
    notebook = jupytext.read(ROOT / chapter)
    cells = to_lab(notebook, macros_from_config(ROOT / "_config.yml"))["cells"]
    return (sum("jupyter" in cell["metadata"] for cell in cells),
            sum("dropdown" in cell["metadata"].get("book_lab", {}) for cell in cells))


# Text of every rendered markdown cell, and what the page shows of collapsed inputs.
PAGE_REPORT_JS = """() => {
 const folds = () => Array.from(document.querySelectorAll('.jp-MarkdownCell .myst details'))
   .filter(d => /^Solution( \\(continued\\))?$/
                  .test(d.querySelector('summary')?.textContent.trim()));
 return {
  markdown: Array.from(document.querySelectorAll('.jp-MarkdownCell .myst'))
                 .map(e => e.textContent),
  math: document.querySelectorAll('.jp-MarkdownCell .katex').length,
  collapsed: document.querySelectorAll('.jp-Cell .jp-InputPlaceholder').length,
  closed: folds().filter(d => !d.open).length,
  opened: folds().filter(d => d.open).length,
  stderr: Array.from(document.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))
            .map(e => e.textContent.slice(0, 400)),
 };
}"""
# Waits until the chapter's kernel (shuffle-privacy, from its metadata) is up and idle.
KERNEL_READY_JS = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  for (let i = 0; i < 600; i++) {
    const kernel = panel.sessionContext.session?.kernel;
    if (kernel && kernel.status === 'idle') return 'idle';
    await new Promise(resolve => setTimeout(resolve, 200));
  }
  return panel.sessionContext.session?.kernel?.status ?? 'no kernel';
}"""


async def _check_chapter(page, url: str, chapter: str, screenshot: Path) -> list[str]:
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    problems: list[str] = []
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(f"uncaught: {e}"))
    before = (ROOT / chapter).read_bytes()
    await page.goto(f"{url}/lab/workspaces/test-{screenshot.stem}/tree/{chapter}?reset")
    await page.wait_for_function(  # every markdown cell rendered by jupyterlab-myst
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget?.sessionContext"
        " && document.querySelectorAll('.jp-MarkdownCell .myst').length"
        " === document.querySelectorAll('.jp-MarkdownCell').length", timeout=120_000)
    status = await page.evaluate(KERNEL_READY_JS)
    if status != "idle":
        return [f"the kernel did not start (status {status!r})"]
    collapsed, dropdowns = _expected_folds(chapter)
    try:  # jupyterlab-myst renders the whole notebook once more after the cells: wait for it
        await page.wait_for_function(f"() => ({PAGE_REPORT_JS})().closed >= {dropdowns}",
                                     timeout=60_000)
    except PlaywrightTimeout:
        pass  # reported below
    opened = await page.evaluate(PAGE_REPORT_JS)
    if (opened["collapsed"], opened["closed"], opened["opened"]) != (collapsed, dropdowns, 0):
        problems.append(f"solutions on opening: {opened['collapsed']} collapsed code cells, "
                        f"{opened['closed']} closed and {opened['opened']} open dropdowns; "
                        f"expected {collapsed}, {dropdowns} and 0")

    try:  # the command's promise settles when the last cell has run
        await asyncio.wait_for(page.evaluate(
            "() => window.jupyterapp.commands.execute('notebook:run-all-cells')"), RUN_TIMEOUT_S)
    except TimeoutError:
        problems.append(f"still running after {RUN_TIMEOUT_S} s")
    await page.wait_for_timeout(2000)  # the inline expressions of the last markdown cells
    await page.evaluate("() => document.querySelector('.jp-WindowedPanel-outer')?.scrollTo(0, 0)")
    await page.wait_for_timeout(500)
    await page.screenshot(path=str(screenshot))  # the chapter's top, after the run
    for placeholder in await page.query_selector_all(".jp-Cell .jp-InputPlaceholder"):
        await placeholder.click()  # open every solution, to check its text too
    await page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    await page.wait_for_timeout(2000)

    report = await page.evaluate(PAGE_REPORT_JS)
    if report["opened"]:
        problems.append(f"{report['opened']} solution dropdowns opened by running the cells")
    problems += [f"stderr/error output: {text}" for text in report["stderr"]]
    if report["math"] == 0:
        problems.append("no typeset math")
    problems += sorted({f"console: {text[:300]}" for text in console
                        if "Undefined control sequence" in text or "uncaught" in text})
    for text in report["markdown"]:
        for marker in RAW_MYST:
            if marker in text:
                at = text.index(marker)
                problems.append(f"raw {marker!r} in a rendered cell: "
                                f"...{text[max(0, at - 60):at + 60]}...")
    if (ROOT / chapter).read_bytes() != before:
        problems.append("the chapter file changed on disk after opening, running and saving")
    return problems


def test_chapters_render_and_run_in_jupyterlab(lab: str, chromium: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from playwright.async_api import async_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    problems: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}

    async def run() -> None:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=str(chromium))
            for number, chapter in enumerate(CHAPTERS, start=1):
                page = await browser.new_page(viewport={"width": 1400, "height": 1000})
                part, stem = chapter.split("/")[1], Path(chapter).stem
                shot = SCREENSHOTS / f"{number:02d}-{part}-{stem}.png"
                start = time.monotonic()
                found = await _check_chapter(page, lab, chapter, shot)
                seconds[chapter] = time.monotonic() - start
                if found:
                    problems[chapter] = found
                await page.close()
            await browser.close()

    asyncio.run(run())
    with capsys.disabled():
        print(f"\n{len(CHAPTERS)} chapters run in JupyterLab: "
              + ", ".join(f"{Path(c).stem} {s:.0f} s" for c, s in seconds.items())
              + f"; screenshots in {SCREENSHOTS}")
    assert not problems, "\n".join(
        f"{chapter}:\n" + "\n".join(f"  - {p}" for p in found[:10])
        for chapter, found in problems.items())
