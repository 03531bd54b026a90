"""The quick start runs and prints what the documents show (README.md and the book's page).

Every python block of README.md's "Quick start" section and of book/back/api/quickstart.md is run
in a fresh namespace; what it prints must equal the text block that follows it, so the examples
cannot go stale when the library changes. ``test_wheel.py`` runs the same blocks from an
installed wheel.
"""

from __future__ import annotations

import pytest
from doc_snippets import QUICKSTART_PAGE, README, Snippet, all_snippets, run, snippets

SNIPPETS = all_snippets()


def test_each_document_has_the_three_examples() -> None:
    # amplification bound, personalized accountant, zCDP/GDP conversion: in this order
    wanted = ("fmt21_numerical_epsilon", "personalized_numerical_epsilon", "zcdp_to_approx_dp")
    for found in (snippets(README, "Quick start"), snippets(QUICKSTART_PAGE)):
        assert len(found) == len(wanted), [s.where for s in found]
        for snippet, name in zip(found, wanted, strict=True):
            assert name in snippet.code, f"{snippet.where} should call {name}"
            assert len(snippet.code.splitlines()) <= 10, f"{snippet.where}: keep it short"


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.where for s in SNIPPETS])
def test_snippet_prints_what_the_document_shows(snippet: Snippet) -> None:
    assert run(snippet.code, snippet.where) == snippet.expected


def test_a_python_block_without_its_output_is_refused(tmp_path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(1)\n```\n\nprose\n\n```text\n1\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="followed by a text block"):
        snippets(page)
