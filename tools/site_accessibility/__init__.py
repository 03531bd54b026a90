"""The website's accessibility fixes: a Sphinx extension (``sphinx.local_extensions``).

The browser test (``tests/test_site_browser.py``) audits every page with axe-core and fails on a
serious or critical violation. These are the fixes for what the theme and the extensions emit
(the chapters' own figures carry their alt text in their cell metadata):

- **Link colour** (``static/accessibility.css``): sphinx-book-theme's blue links (``#176de8``)
  reach only 4.2:1 on the tinted backgrounds of admonitions, theorems and citations (WCAG AA asks
  4.5:1); a darker blue, ``#1262d0``, has at least 5:1 on all of them.
- **Search button** (``templates/search-button-field.html``, pydata-sphinx-theme 0.17.1's
  template without its ``aria-label``): the label "Search" left out the visible shortcut
  "Ctrl+K"; the button's name is now its visible text.
- **Light/dark switch** (``templates/theme-switcher.html``, the same template without the icons'
  ``title``): the visible icon's title ("Light", "Dark", "System Settings") was not part of the
  button's name, "Color mode"; the icons are now decorative.
- **Hidden code cells**: MyST-NB names each "Show code cell source" toggle "Toggle hidden
  content", which is not its visible text; the label is dropped, so the visible text names it.
- **Navigation**: the sidebar's expand toggle of a page with sub-pages (the API reference) has no
  name; it gets "Sections of <page title>".
- **Bibliography**: docutils gives each entry the deprecated ARIA role ``doc-biblioentry``,
  which leaves the ``role="list"`` around them without list items; each entry becomes a
  ``listitem``.

Pages of ``_modules/`` (the API reference's source listings) written before these fixes are
dated back when a build starts, because sphinx.ext.viewcode rewrites such a page only when it
is older than its module. No fix checks versions: if a theme upgrade changes the markup, the
audit in the browser test reports the violation again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

HERE = Path(__file__).resolve().parent


def _name_toggles(toctree: object) -> object:
    """Give each unnamed expand toggle of the sidebar (a ``<summary>`` holding only an icon, next
    to the link of a page with sub-pages) the name "Sections of <page title>"; ``toctree`` is the
    BeautifulSoup tree of pydata-sphinx-theme's ``generate_toctree_html``, changed in place."""
    select = getattr(toctree, "select", None)
    if select is None:
        return toctree
    for summary in select("li.has-children > details > summary"):
        link = summary.find_parent("li").find("a", recursive=False)
        named = summary.get_text(strip=True) or "aria-label" in summary.attrs
        if link is not None and not named:
            summary["aria-label"] = f"Sections of {link.get_text(' ', strip=True)}"
    return toctree


def _add_paths(app: Sphinx, config: Config) -> None:
    """``config-inited``: our stylesheet and the two theme templates we replace."""
    config.html_static_path.append(str(HERE / "static"))
    config.templates_path.insert(0, str(HERE / "templates"))


def _age_stale_source_pages(app: Sphinx) -> None:
    """``builder-inited``: sphinx.ext.viewcode rewrites a page of ``_modules/`` only when it is
    older than its module, so an existing site keeps pages written without these fixes (which
    fail the audit); date those back, and the next build that writes pages writes them anew."""
    modules = Path(app.outdir, "_modules")
    for page in modules.rglob("*.html") if modules.is_dir() else ():
        if "accessibility.css" not in page.read_text(encoding="utf-8", errors="replace"):
            os.utime(page, (0, 0))


def _fix_page(app: Sphinx, pagename: str, templatename: str, context: dict,
              doctree: object) -> None:
    """``html-page-context``: fix the page body and wrap the theme's sidebar function."""
    body = context.get("body")
    if isinstance(body, str):
        body = body.replace('<summary aria-label="Toggle hidden content">', "<summary>")
        context["body"] = body.replace(' role="doc-biblioentry"', ' role="listitem"')
    generate: Callable[..., object] | None = context.get("generate_toctree_html")
    if generate is not None and not getattr(generate, "names_toggles", False):

        def generate_named(*args: object, **kwargs: object) -> object:
            return _name_toggles(generate(*args, **kwargs))

        generate_named.names_toggles = True  # type: ignore[attr-defined]
        context["generate_toctree_html"] = generate_named


def setup(app: Sphinx) -> dict:
    """Register the stylesheet, the templates and the page fixes."""
    app.connect("config-inited", _add_paths)
    app.connect("builder-inited", _age_stale_source_pages)
    app.add_css_file("accessibility.css")
    # after pydata-sphinx-theme, which adds generate_toctree_html to the context
    app.connect("html-page-context", _fix_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
