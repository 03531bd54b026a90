"""IPython extension loaded by the book's kernel (``shuffle-privacy``): glued numbers in JupyterLab.

The chapters put computed numbers into their prose with MyST-NB's ``glue(name, value)`` in a
code cell and the role ``{glue:text}`name:format``` in the text. Sphinx resolves the role when it
builds the website; JupyterLab does not know it. In JupyterLab the book's contents manager
(``book_contents.py``) therefore shows each role as the inline expression
``{eval}`glue_text("name:format")```, which jupyterlab-myst evaluates in the kernel when the
markdown cell is run. This extension provides ``glue_text`` and makes ``glue`` remember what it
glued, formatted exactly as the website formats it (MyST-NB's own ``format_plain_text``).

It is harmless outside JupyterLab: the website build runs the same kernel, and ``glue`` still
does what MyST-NB's ``glue`` does.
"""

from __future__ import annotations

from typing import Any

import myst_nb

PLACEHOLDER = "[not computed yet: run the cells above]"
_glued_text: dict[str, str] = {}  # name -> text/plain representation, as MyST-NB stores it


class _Text:
    """A string shown without quotes by the inline-expression renderer."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def glue_text(key_and_format: str) -> _Text:
    """The text that ``{glue:text}`key_and_format``` shows on the website: the glued value's
    plain-text representation with the optional ``:format`` applied (split at the last colon,
    as MyST-NB does), or a placeholder while the cell that glues it has not run."""
    key, sep, fmt_spec = key_and_format.rpartition(":")
    if not sep:
        key, fmt_spec = key_and_format, "s"
    if key not in _glued_text:
        return _Text(PLACEHOLDER)
    from myst_nb.core.variables import format_plain_text  # imports docutils: only when used

    return _Text(format_plain_text(_glued_text[key], fmt_spec))


def load_ipython_extension(ipython: Any) -> None:
    """Wrap ``myst_nb.glue`` so that it records each value's text, and define ``glue_text``.
    Chapters import ``glue`` after the kernel starts, so they get the wrapper."""
    original = myst_nb.glue

    def glue(name: str, variable: Any, display: bool = True) -> None:
        original(name, variable, display)
        from IPython.core.formatters import format_display_data

        _glued_text[name] = format_display_data(variable)[0].get("text/plain", "")

    glue.__doc__ = original.__doc__
    myst_nb.glue = glue
    ipython.user_ns["glue_text"] = glue_text
