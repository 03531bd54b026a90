"""The page probe of the browser tests: MathJax's state, TeX left untypeset, images, widgets.

``INSPECT_JS`` runs in a page after its load event (Playwright's ``page.evaluate``): it waits for
MathJax (``MathJax.startup.promise``) and the widget manager, then returns a report with

- ``mathjax`` (MathJax's version, or null when the page has no MathJax), ``formulas`` (typeset
  formulas, ``mjx-container``) and ``spoken`` (those with assistive MathML);
- ``merrors``: TeX errors (``mjx-merror``); ``undefinedMacros``: macros MathJax does not know,
  which it typesets in red (read from each formula's MathML);
- ``untypeset``: LaTeX delimiters left in the visible text (``\\(``, ``\\[``, ``$$``,
  ``\\begin{``, ``$\\macro``) outside code, scripts and typeset math;
- ``mathElements``: elements of class ``math`` (where Sphinx puts TeX for MathJax);
- ``images``, ``badImages`` (not decoded), ``widgetViews`` and ``widgetsDrawn`` (saved widgets).

Used by ``test_site_browser.py`` (the website) and ``test_portable_clients.py`` (the portable
notebooks rendered by nbconvert).
"""

from __future__ import annotations

# Runs in the page after the load event: waits for MathJax and the widget manager, then reports.
INSPECT_JS = r"""
async () => {
  const out = {mathElements: document.querySelectorAll('.math').length, mathjax: null,
               merrors: [], undefinedMacros: [], untypeset: [], badImages: [], images: 0,
               widgetViews: 0, widgetsDrawn: 0, formulas: 0, spoken: 0};
  const MJ = window.MathJax;
  if (MJ && MJ.startup && MJ.startup.promise) {
    await MJ.startup.promise;
    out.mathjax = MJ.version;
    for (const e of document.querySelectorAll('mjx-merror')) {
      out.merrors.push(e.getAttribute('data-mjx-error') || e.textContent);
    }
    for (const item of Array.from(MJ.startup.document.math)) {
      const mml = MJ.startup.toMML(item.root);
      for (const m of mml.matchAll(/<mtext mathcolor="red">(\\[^<]*)<\/mtext>/g)) {
        out.undefinedMacros.push(m[1]);
      }
    }
    // assistive MathML: a hidden <math> copy of each formula, which screen readers read out
    out.formulas = document.querySelectorAll('mjx-container').length;
    out.spoken = document.querySelectorAll('mjx-container > mjx-assistive-mml > math').length;
  }
  // LaTeX left in the visible text, outside code, scripts and typeset math
  const skip = 'script, style, pre, code, textarea, kbd, samp, mjx-container, .highlight';
  const raw = /\\\(|\\\[|\$\$|\\begin\{|\$\\[A-Za-z]+/;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue;
    if (!raw.test(text) || node.parentElement.closest(skip)) continue;
    const at = text.search(raw);
    out.untypeset.push(text.slice(Math.max(0, at - 40), at + 60).replace(/\s+/g, ' '));
  }
  // Images: none lazy, all decoded
  const images = Array.from(document.images);
  out.images = images.length;
  for (const img of images) img.loading = 'eager';
  await Promise.all(images.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener('load', done); img.addEventListener('error', done);
    setTimeout(done, 20000);
  })));
  for (const img of images) {
    if (!(img.complete && img.naturalWidth > 0)) out.badImages.push(img.getAttribute('src'));
  }
  // Saved widgets (the html manager draws each view next to its script tag)
  const views = document.querySelectorAll(
    'script[type="application/vnd.jupyter.widget-view+json"]');
  out.widgetViews = views.length;
  const drawn = () => document.querySelectorAll('.widget-subarea > .jupyter-widgets').length;
  for (let waited = 0; drawn() < views.length && waited < 10000; waited += 100) {
    await new Promise(done => setTimeout(done, 100));
  }
  out.widgetsDrawn = drawn();
  await document.fonts.ready;
  return out;
}
"""
