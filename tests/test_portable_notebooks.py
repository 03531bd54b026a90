"""Portable notebooks (``tools/portable_notebooks.py``): unit tests on small MyST snippets, with
the website's numbers, glued values and targets given as data (run by ``make test``), and one
check that exports every chapter of the built book (marked ``book``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from project_tools import load_tool

ROOT = Path(__file__).resolve().parents[1]


portable = load_tool("portable_notebooks")
Macro, Target, Citation, Context = (portable.Macro, portable.Target, portable.Citation,
                                    portable.Context)

MACROS = {"eps": Macro(r"\varepsilon"), "E": Macro(r"\mathbb{E}"),
          "Hockey": Macro("H_{e^{#1}}", 1), "Renyi": Macro("D_{#1}", 1)}
PAGE = "book/clones/amplification.html"


def _context(**changes: object) -> Context:
    """A chapter's data as the built book would give it."""
    data = {
        "macros": MACROS,
        "targets": {
            "thm-a": Target(PAGE, "thm-a", number="Theorem 6.1"),
            "ex-a": Target(PAGE, "ex-a", title=None, number="Exercise 6.1"),
            "fig-a": Target(PAGE, "fig-a", title="The clones", number="Fig. 6.2"),
            "ch-shuffle": Target("book/foundations/shuffle_model.html", "ch-shuffle",
                                 title="The shuffle model", chapter="Chapter 3"),
            "sec-trust": Target("book/clones/checks.html", "sec-trust",
                                title="How we know these numbers are right"),
        },
        "citations": {
            "feldman2021": Citation(("Feldman", "McMillan", "Talwar"), "2021", "id7"),
            "balle2019": Citation(("Balle", "Bell"), "2019", "id28"),
            "warner1965": Citation(("Warner",), "1965", "id3"),
        },
        "glue": {"bridge": "0.182412347489752", "points": "54", "tiny": "6.72e-121",
                 "name": "'x_1'"},
        "blocks": {"theorem": ["Theorem 6.1"], "exercise": ["Exercise 6.1"]},
        "chapter_number": "6",
    }
    data.update(changes)
    return Context(**data)


# --- macros -----------------------------------------------------------------------------------

def test_macro_with_an_argument_is_expanded_with_its_argument_expanded() -> None:
    text = r"$\Hockey{\eps}(P \Vert Q) \le \delta$ and $\E[X]$"
    assert portable.expand_macros(text, MACROS) == (
        r"$H_{e^{\varepsilon}}(P \Vert Q) \le \delta$ and $\mathbb{E}[X]$")


def test_nested_braces_and_unbraced_arguments() -> None:
    assert portable.expand_macros(r"\Hockey{\eps_{0,{1}} + x}", MACROS) == (
        r"H_{e^{\varepsilon_{0,{1}} + x}}")
    assert portable.expand_macros(r"\Renyi\alpha(P)", MACROS) == r"D_{\alpha}(P)"
    assert portable.expand_macros(r"\Renyi 2", MACROS) == "D_{2}"
    assert portable.expand_macros(r"\Hockey{\{a\}}", MACROS) == r"H_{e^{\{a\}}}"


def test_only_whole_macro_names_are_expanded() -> None:
    text = r"\epsilon \eps_0 \Exp \E"
    assert portable.expand_macros(text, MACROS) == r"\epsilon \varepsilon_0 \Exp \mathbb{E}"


def test_unbalanced_argument_is_refused() -> None:
    with pytest.raises(ValueError, match="unbalanced"):
        portable.expand_macros(r"\Hockey{\eps", MACROS)


def test_macros_are_read_from_the_config() -> None:
    macros = portable.load_macros(ROOT / "_config.yml")
    assert macros["eps"] == Macro(r"\varepsilon")
    assert macros["Hockey"] == Macro("H_{e^{#1}}", 1)


# --- directives ----------------------------------------------------------------------------

PRF = """Before.

````{prf:theorem} Amplification by $\\eps$
:label: thm-a

Body with $\\Hockey{\\eps}$.
````

````{prf:proof}
It follows.
````
"""


def test_prf_block_gets_the_website_number_title_and_anchor() -> None:
    ctx = _context()
    out = portable.render_markdown(PRF, ctx)
    assert '<a id="thm-a"></a>\n\n**Theorem 6.1** (Amplification by $\\varepsilon$).' in out
    assert "Body with $H_{e^{\\varepsilon}}$." in out
    assert "*Proof.* It follows. ∎" in out
    assert "```" not in out and ":label:" not in out
    assert ctx.blocks["theorem"] == []  # the number was used


def test_prf_block_whose_number_disagrees_with_its_label_is_refused() -> None:
    ctx = _context(blocks={"theorem": ["Theorem 6.2"]})
    with pytest.raises(ValueError, match="thm-a"):
        portable.render_markdown(PRF, ctx)


def test_admonitions_and_dropdown_aside() -> None:
    text = ("```{admonition} Key idea\n:class: important\nClones hide $\\eps$.\n```\n\n"
            "```{admonition} Aside: why step 2\n:class: dropdown\n\n"
            "It is {glue:text}`bridge:.4f`.\n```\n")
    out = portable.render_markdown(text, _context())
    assert "**Key idea**\n\nClones hide $\\varepsilon$." in out
    assert "<details>\n<summary>Aside: why step 2</summary>\n\nIt is 0.1824.\n\n</details>" in out


def test_code_fences_inside_and_outside_directives_are_kept_verbatim() -> None:
    text = "```python\nx = r'\\eps' # {ref}`no`\n```\n"
    assert portable.render_markdown(text, _context()).strip() == text.strip()


def test_unknown_directive_and_role_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported directive"):
        portable.render_markdown("```{mermaid}\ngraph\n```\n", _context())
    with pytest.raises(ValueError, match="unsupported role"):
        portable.render_markdown("{term}`x`", _context())


def test_list_table_becomes_a_pipe_table() -> None:
    text = ("```{list-table} Models.\n:header-rows: 1\n:name: tbl-a\n\n* - statement\n  - holds\n"
            "* - {prf:ref}`thm-a`\n  - yes,\n    always\n```\n")
    ctx = _context(targets={**_context().targets,
                            "tbl-a": Target(PAGE, "tbl-a", number="Table 6.1")})
    out = portable.render_markdown(text, ctx)
    assert "**Table 6.1** Models." in out
    assert "| statement | holds |\n|---|---|\n| [Theorem 6.1](" in out
    assert "| yes, always |" in out


# --- roles ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("role", "value"), [
    ("{glue:text}`bridge:.3f`", "0.182"),
    ("{glue:text}`bridge:.1e`", "1.8e-01"),
    ("{glue:text}`points`", "54"),
    ("{glue:text}`points:,d`", "54"),
    ("{glue:text}`tiny:.1e`", "6.7e-121"),
    ("{glue:text}`name`", "x\\_1"),  # a string loses its quotes; markdown is escaped
])
def test_glue_role_with_format_spec(role: str, value: str) -> None:
    assert portable.render_markdown(f"is {role}.", _context()) == f"is {value}."


def test_missing_glue_value_is_an_error() -> None:
    with pytest.raises(KeyError, match="absent"):
        portable.render_markdown("{glue:text}`absent:.2f`", _context())


def test_references_link_to_the_website_with_its_numbers() -> None:
    ctx = _context()
    out = portable.render_markdown(
        "By {prf:ref}`thm-a`, {numref}`fig-a`, {ref}`ex-a`, {ref}`sec-trust`, "
        "{ref}`ch-shuffle`; the chapter {ref}`ch-shuffle` too; {ref}`see here <thm-a>`; "
        "{numref}`Figure %s <fig-a>`.", ctx)
    base = "../html/book/"
    assert f"By [Theorem 6.1]({base}clones/amplification.html#thm-a)" in out
    assert f"[Fig. 6.2]({base}clones/amplification.html#fig-a)" in out
    assert f"[Exercise 6.1]({base}clones/amplification.html#ex-a)" in out
    assert f"[How we know these numbers are right]({base}clones/checks.html#sec-trust)" in out
    assert f"[Chapter 3]({base}foundations/shuffle_model.html#ch-shuffle);" in out
    assert "the chapter [The shuffle model](" in out
    assert "[see here](" in out and "[Figure 6.2](" in out


def test_base_url_is_configurable_and_unknown_labels_fail() -> None:
    ctx = _context(base_url="https://example.org/book/")
    out = portable.render_markdown("{prf:ref}`thm-a`", ctx)
    assert out == "[Theorem 6.1](https://example.org/book/book/clones/amplification.html#thm-a)"
    with pytest.raises(KeyError, match="nowhere"):
        portable.render_markdown("{ref}`nowhere`", ctx)


def test_citations_in_author_year_form() -> None:
    out = portable.render_markdown(
        "{cite:t}`feldman2021` and {cite:t}`warner1965` {cite:p}`feldman2021, balle2019`",
        _context())
    bib = "../html/book/back/bibliography.html"
    assert out == (f"[Feldman et al. (2021)]({bib}#id7) and [Warner (1965)]({bib}#id3) "
                   f"([Feldman et al., 2021]({bib}#id7); [Balle and Bell, 2019]({bib}#id28))")


def test_a_role_inside_math_becomes_text_without_a_link() -> None:
    out = portable.render_markdown(
        "$$\n\\eps \\quad\\text{({cite:t}`feldman2021`, Theorem 3.1)}\n$$", _context())
    assert out == "$$\n\\varepsilon \\quad\\text{(Feldman et al. (2021), Theorem 3.1)}\n$$"


def test_inline_math_across_a_line_break_keeps_roles_outside_it_linked() -> None:
    out = portable.render_markdown("$a +\nb$ by {prf:ref}`thm-a` and $c$.", _context())
    assert out.startswith("$a +\nb$ by [Theorem 6.1](../html/")


def test_heading_titles_come_from_the_sources_with_their_math(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "a.md").write_text("(note-a)=\n### Theorem 1 with $\\delta_t > 0$\n",
                                            encoding="utf-8")
    titles = portable.source_titles(tmp_path)
    assert titles == {"note-a": "Theorem 1 with $\\delta_t > 0$"}
    targets = portable.with_titles({"note-a": Target(PAGE, "note-a", "Theorem 1 with d")}, titles)
    assert targets["note-a"].title == titles["note-a"]


def test_labels_become_anchors_before_a_blank_line() -> None:
    out = portable.render_markdown("(sec-x)=\n## A section\n", _context())
    assert out.startswith('<a id="sec-x"></a>\n\n## A section')


# --- whole chapters ---------------------------------------------------------------------------

CHAPTER = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  display_name: Python (Shuffle Privacy)
  language: python
  name: shuffle-privacy
---

(ch-a)=
# A chapter

```{code-cell} ipython3
from myst_nb import glue

glue("points", 54, display=False)
```

```{code-cell} ipython3
---
mystnb:
  figure:
    caption: |
      Clones of $\\eps_0$ ({prf:ref}`thm-a`).
    name: fig-a
---
print("figure")
```

## Exercises

```{exercise-start}
:label: ex-a
```
Compute $\\Hockey{\\eps}$.
```{exercise-end}
```

```{solution-start} ex-a
:class: dropdown
```
SECRET answer is {glue:text}`points`.

```{code-cell} ipython3
print("SECRET code")
```

More SECRET text.
```{solution-end}
```

Text after.
"""


def _cells(notebook: nbformat.NotebookNode, kind: str) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == kind]


def test_instructor_edition_folds_each_solution_after_its_exercise() -> None:
    notebook = portable.convert_chapter(CHAPTER, _context(), "instructor")
    markdown = "\n".join(_cells(notebook, "markdown"))
    assert "# 6. A chapter" in markdown
    assert '<a id="ex-a"></a>\n\n**Exercise 6.1**\n\nCompute $H_{e^{\\varepsilon}}$.' in markdown
    assert ("<details>\n<summary>Solution to Exercise 6.1</summary>\n\nSECRET answer is 54."
            in markdown)
    assert "<summary>Solution to Exercise 6.1 (continued)</summary>\n\nMore SECRET text." in (
        markdown)
    sources = [cell.source for cell in notebook.cells]
    solution_code = next(k for k, s in enumerate(sources) if "SECRET code" in s)
    assert "SECRET answer" in sources[solution_code - 1]
    assert "More SECRET" in sources[solution_code + 1]
    assert notebook.cells[solution_code].metadata["tags"] == ["solution"]
    assert markdown.rstrip().endswith("Text after.")
    assert not portable.raw_myst(markdown, MACROS)
    nbformat.validate(notebook)


def test_student_edition_has_the_exercise_and_no_solution() -> None:
    notebook = portable.convert_chapter(CHAPTER, _context(), "student")
    text = "\n".join(cell.source for cell in notebook.cells)
    assert "**Exercise 6.1**" in text and "Text after." in text
    assert "SECRET" not in text and "<details>" not in text


def test_figure_caption_goes_under_its_cell_and_glue_becomes_a_shim() -> None:
    notebook = portable.convert_chapter(CHAPTER, _context(), "student", "https://x/a.html")
    code = _cells(notebook, "code")
    assert "myst_nb" not in "\n".join(code)
    assert code[0].startswith("def glue(name, value, display=True):")
    figure = next(k for k, cell in enumerate(notebook.cells) if 'print("figure")' in cell.source)
    assert "mystnb" not in notebook.cells[figure].metadata
    assert notebook.cells[figure + 1].source == (
        '<a id="fig-a"></a>\n\n**Fig. 6.2** Clones of $\\varepsilon_0$ '
        "([Theorem 6.1](../html/book/clones/amplification.html#thm-a)).\n")
    assert "https://x/a.html" in notebook.cells[0].source
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    shown: list[object] = []
    namespace = {"__name__": "chapter"}
    exec(code[0].replace("from IPython.display import display as show", "show = shown.append"),
         {**namespace, "shown": shown})
    assert shown == []  # display=False shows (and records) nothing


def test_repository_paths_are_reported() -> None:
    text = CHAPTER.replace('print("figure")', 'BOOK = Path("..")')
    assert portable.repository_paths(text) == ['BOOK = Path("..")']
    assert portable.repository_paths(CHAPTER) == []


# --- reading the built book (on small stand-ins) ---------------------------------------------

PAGE_HTML = """<html><h1>Title for print</h1>
<section id="a-chapter"><span id="ch-a"></span><h1><span class="section-number">6. </span>A
chapter</h1>
<div class="proof theorem admonition" id="thm-a"><p class="admonition-title">
<span class="caption-number">Theorem 6.1 </span> (Amplification)</p></div>
<div class="proof admonition" id="proof"><p>Proof.</p></div>
<div class="proof lemma admonition" id="lemma-2"><p class="admonition-title">
<span class="caption-number">Lemma 6.1 </span></p></div>
<figure id="fig-a"><img src="x.png"/><figcaption><p><span class="caption-number">Fig. 6.2 </span>
<span class="caption-text">Clones</span></p></figcaption></figure>
<div class="exercise admonition" id="ex-a"><p class="admonition-title">
<span class="caption-number">Exercise 6.1 </span></p></div>
<div class="solution dropdown admonition" id="sol"><p class="admonition-title">Solution to
Exercise 6.1</p></div></section></html>"""


def test_page_parser_reads_numbers_blocks_and_chapter() -> None:
    parser = portable.PageParser()
    parser.feed(PAGE_HTML)
    assert parser.chapter == "6" and parser.chapter_ids == ["ch-a"]
    assert parser.numbers == {"thm-a": "Theorem 6.1", "lemma-2": "Lemma 6.1",
                              "fig-a": "Fig. 6.2", "ex-a": "Exercise 6.1"}
    assert parser.blocks == [("theorem", "Theorem 6.1"), ("lemma", "Lemma 6.1"),
                             ("exercise", "Exercise 6.1")]


def test_citations_are_read_from_bibtex_and_matched_to_the_page(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("""@misc{canonne2021doona,
  author = {Canonne, Cl{\\'e}ment},
  title = {Privacy doona: why we should hide among the {C}lones},
  year = {2021}
}
@inproceedings{feldman2023stronger,
  author = {Feldman, Vitaly and McMillan, Audra and Talwar, Kunal},
  title = {Stronger privacy amplification by shuffling for {R}{\\'e}nyi and approximate
           differential privacy},
  year = {2023}
}
""", encoding="utf-8")
    page = tmp_path / "bibliography.html"
    page.write_text("""<div class="citation" id="id6" role="listitem"><p>Clément Canonne.
Privacy doona: why we should hide among the clones. Blog post, 2021.</p></div>
<div class="citation" id="id31" role="listitem"><p>Vitaly Feldman, Audra McMillan, and Kunal
Talwar. Stronger privacy amplification by shuffling for rényi and approximate differential
privacy. In <em>SODA</em>. 2023.</p></div>""", encoding="utf-8")
    citations = portable.read_citations(bib, page)
    assert citations["canonne2021doona"] == Citation(("Canonne",), "2021", "id6")
    assert citations["feldman2023stronger"] == Citation(
        ("Feldman", "McMillan", "Talwar"), "2023", "id31")
    assert portable.latex_text(r"Cl{\'e}ment G{\"o}del") == "Clément Gödel"


def test_glue_is_read_from_the_executed_notebook(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("glue('a', 1)")])
    notebook.cells[0].outputs = [nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "0.5"},
        metadata={"scrapbook": {"name": "a", "mime_prefix": "application/papermill.record/"}})]
    (tmp_path / "part").mkdir()
    nbformat.write(notebook, tmp_path / "part" / "chapter.ipynb")
    assert portable.read_glue(tmp_path, "part/chapter") == {"a": "0.5"}
    assert portable.read_glue(tmp_path, "part/none") == {}


def test_unbuilt_book_fails_with_a_clear_message(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="make book"):
        portable.export(tmp_path, tmp_path / "out", portable.DEFAULT_BASE_URL)


# --- the built book ---------------------------------------------------------------------------

def _tex_outside_math(markdown: str) -> list[str]:
    """TeX commands left in the text outside math, code and amsmath environments."""
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.DOTALL | re.MULTILINE)
    text = portable.MATH.sub("", re.sub(r"`[^`\n]*`", "", text))
    text = re.sub(r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}", "", text, flags=re.DOTALL)
    return re.findall(r".{0,30}\\[A-Za-z]+", text)


def _solution_lines(text: str) -> list[str]:
    """Distinctive lines of a chapter's solutions (code and plain prose, not also elsewhere in
    the chapter), which the student edition must not contain."""
    rest = portable.student_edition.strip_solutions(text)
    lines = []
    for block in portable.student_edition.SOLUTION.findall(text):
        for line in block.splitlines():
            line = line.strip()
            if (len(line) > 30 and line not in rest
                    and not re.search(r"[{}$\\`*]|^#|^-|^```", line)):
                lines.append(line)
    return lines


@pytest.mark.book
def test_every_chapter_of_the_built_book_exports_without_myst(tmp_path: Path) -> None:
    if not (ROOT / "_build" / "html" / "objects.inv").is_file():
        pytest.fail("the book is not built: run `make book` first")
    portable.export(ROOT, tmp_path, portable.DEFAULT_BASE_URL)
    macros = portable.load_macros(ROOT / "_config.yml")
    chapters = portable.toc_chapters(ROOT)
    assert len(chapters) > 20
    problems, leaks, kept = [], [], 0
    for chapter in chapters:
        name = "_".join(chapter.relative_to(ROOT / "book").with_suffix(".ipynb").parts)
        solution_lines = _solution_lines(chapter.read_text(encoding="utf-8"))
        for edition in portable.EDITIONS:
            notebook = nbformat.read(tmp_path / edition / name, as_version=4)
            nbformat.validate(notebook)
            for k, cell in enumerate(notebook.cells):
                if cell.cell_type == "markdown" and (raw := portable.raw_myst(cell.source,
                                                                             macros)):
                    problems.append(f"{edition}/{name} cell {k}: {raw}")
                if cell.cell_type == "markdown" and (tex := _tex_outside_math(cell.source)):
                    problems.append(f"{edition}/{name} cell {k}: TeX outside math {tex}")
                if cell.cell_type == "code":
                    assert "myst_nb" not in cell.source, f"{edition}/{name} cell {k}"
                    ast.parse(cell.source)
                for target in re.findall(r"\]\(\.\./html/([^)#]+)", cell.source):
                    if not (ROOT / "_build" / "html" / target).is_file():
                        problems.append(f"{edition}/{name} cell {k}: dead link {target}")
            text = "\n".join(cell.source for cell in notebook.cells)
            if edition == "student":
                leaks += [f"{name}: {line}" for line in solution_lines if line in text]
                if "<summary>Solution" in text:
                    leaks.append(f"{name}: a folded solution")
            else:  # the detector sees what the student edition must not have
                kept += sum(line in text for line in solution_lines)
                problems += [f"{name}: solution line missing: {line}"
                             for line in solution_lines if line not in text]
    assert not problems, "\n".join(problems[:20])
    assert kept > 100, f"only {kept} solution lines found in the instructor edition"
    assert not leaks, "solution text in the student edition:\n" + "\n".join(leaks[:20])
