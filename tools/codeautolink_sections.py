"""sphinx-codeautolink with the book's directives: a Sphinx extension (``_config.yml``).

sphinx-codeautolink links every name from ``shuffle_lib`` in a code cell to its entry in the API
reference (``book/back/api``). While it reads a page it keeps a stack of section titles: one push
per ``title`` node, one pop per ``section`` it leaves. sphinx-proof and sphinx-exercise break that
pairing: their theorems, definitions, exercises and solutions hold a title outside any section and
a section (``proof-content``, ``exercise-content``, ``solution-content``) without a title, so
codeautolink 0.19.0 pops an empty stack and the build stops (``IndexError: pop from empty list``,
first in ``book/audit/audits.md``). Here titles are pushed only when they head a section, and
popped only when the section has one; nothing else changes.

The replacement is checked against the version it was written for: another version stops the
build with a message, so an upgrade cannot silently change what the patch does.
"""

from __future__ import annotations

import sphinx_codeautolink
import sphinx_codeautolink.extension as codeautolink_extension
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx_codeautolink.extension.block import CodeBlockAnalyser

TESTED_VERSION = "0.19.0"


class SectionTitleAnalyser(CodeBlockAnalyser):
    """codeautolink's code-block visitor, with section titles tracked as pairs."""

    def visit_title(self, node: nodes.title) -> None:
        if isinstance(node.parent, nodes.section):
            super().visit_title(node)

    def depart_section(self, node: nodes.section) -> None:
        if node.children and isinstance(node.children[0], nodes.title):
            super().depart_section(node)


def setup(app: Sphinx) -> dict:
    """Load sphinx-codeautolink with :class:`SectionTitleAnalyser` as its visitor."""
    if sphinx_codeautolink.__version__ != TESTED_VERSION:
        raise ExtensionError(
            f"tools/codeautolink_sections.py was written for sphinx-codeautolink "
            f"{TESTED_VERSION}, found {sphinx_codeautolink.__version__}: check that its "
            "CodeBlockAnalyser still pairs visit_title with depart_section, then update "
            "TESTED_VERSION"
        )
    codeautolink_extension.CodeBlockAnalyser = SectionTitleAnalyser
    app.setup_extension("sphinx_codeautolink")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
