"""The course pack: what a class needs to read and run the book, in one folder and one zip.

``make coursepack`` builds the student edition, the portable notebooks and the wheel of
``shuffle_lib``, then runs this tool, which assembles ``_build/coursepack/``::

    README-students.md     how to run the notebooks: course JupyterHub, Colab, VS Code, locally
    README-lecturers.md    what is in the pack, how to regenerate it, how solutions stay out
    requirements.txt       what the notebooks import (and shuffle_lib needs), pinned
    constraints.txt        every package of the tested environment, pinned (requirements.lock)
    wheel/shuffle_lib-<version>-py3-none-any.whl
    data/                  the data files shipped inside the wheel (with their licence)
    student/notebooks/     portable notebooks without solutions
    student/website/       the student edition of the website (open index.html)
    instructor/notebooks/  portable notebooks with the solutions folded in <details>
    instructor/book.pdf    the whole book with its solutions (tools/book_pdf.py)

and zips it twice: ``_build/coursepack.zip`` (everything) and ``_build/coursepack-student.zip``
(everything but ``instructor/`` and the lecturers' README, to hand out as it is). Before the zips
are written, :func:`check_student_half` looks for solution text in the student half (``student/``);
any finding stops the tool with a non-zero exit and the files and lines concerned. The same check
runs alone with ``--check DIR``.

The requirements are derived, not written by hand: the runtime dependencies declared in
``pyproject.toml``, plus every third-party module imported by a code cell of any portable notebook
(mapped to its distribution), plus ``ipykernel``; each pinned to its version in
``requirements.lock``. Imports that no installed distribution provides (a repository-only helper
module, the book's toolchain such as ``myst_nb``) and code that reads files by a relative path are
reported as portability problems: warnings, or errors with ``--strict``.

Only the standard library is needed: ``python tools/coursepack.py [--portable DIR] [--wheel-dir
DIR] [--website DIR] [--out DIR] [--strict]`` (defaults under ``_build/``).
"""

from __future__ import annotations

import argparse
import ast
import html
import importlib.metadata
import importlib.util
import json
import re
import shutil
import sys
import tomllib
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
WHEEL_NAME = re.compile(r"^shuffle_lib-(?P<version>[^-]+)-py3-none-any\.whl$")
# A solution line is matched only when it is this long (after collapsing spaces), so that short
# lines shared by chance (``plt.show()``, ``$$``) do not count; the same rule as
# tests/test_student_edition.py.
MIN_LINE = 40
SOLUTION_TAG = "solution"  # tools/portable_notebooks.py tags a solution's code cells with it
DETAILS_SOLUTION = re.compile(r"<details>\s*<summary>\s*Solution", re.IGNORECASE)
DETAILS_TAG = re.compile(r"<(/?)details\b[^>]*>", re.IGNORECASE)
MARKERS = ("solution-start", "solution-end")
WEBSITE_TEXT = (".html", ".md", ".ipynb", ".txt", ".py", ".json")
# The distribution of an import name when the environment cannot say (it lacks the package).
KNOWN_DISTRIBUTIONS = {
    "sklearn": "scikit-learn", "dp_accounting": "dp-accounting", "IPython": "ipython",
    "mpl_toolkits": "matplotlib", "yaml": "PyYAML", "PIL": "pillow", "skimage": "scikit-image",
}
# Imports that only exist in the book's build: a portable notebook must not need them.
TOOLCHAIN = {"myst_nb", "jupyter_book", "sphinx", "jupytext", "reading_path", "doc_snippets"}
KERNEL = "ipykernel"  # every client but Colab and a ready-made hub needs it to run a notebook
LOCAL_FRONTEND = "jupyterlab"  # what README-students installs for the local route
FILE_READERS = {"open", "read_csv", "read_text", "read_bytes", "read_json", "read_parquet",
                "read_excel", "load", "loadtxt", "genfromtxt", "Path"}


# ---------------------------------------------------------------------------------------------
# Notebooks
# ---------------------------------------------------------------------------------------------

def read_notebook(path: Path) -> list[dict]:
    """The cells of an ``.ipynb`` file, each with its ``source`` joined into one string."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        source = cell.get("source", "")
        cell["source"] = "".join(source) if isinstance(source, list) else source
    return cells


def code_of(cell: dict) -> str:
    """A code cell's source as Python: IPython magics and shell escapes (``%``, ``!``) dropped."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in cell["source"].splitlines())


def imported_modules(code: str) -> set[str]:
    """Top-level names of the modules that ``code`` imports (absolute imports only)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:  # not Python after all: fall back to the import lines
        found = re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", code, re.MULTILINE)
        return set(found)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def file_reads(code: str) -> list[str]:
    """Calls in ``code`` that read a file by a literal local path (``open("x.csv")``,
    ``pd.read_csv("../data/x.csv")``, ``Path("..")``): outside the repository such a path is
    missing. URLs do not count."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
            node.func, "id", "")
        first = node.args[0]
        if (name in FILE_READERS and isinstance(first, ast.Constant)
                and isinstance(first.value, str) and "://" not in first.value):
            found.append(ast.unparse(node))
    return found


def dataset_loaders(code: str, known: set[str]) -> set[str]:
    """The functions of ``shuffle_lib.datasets`` (``known``, from :func:`wheel_loaders`) that
    ``code`` calls or imports."""
    names = set(re.findall(r"\bdatasets\.([A-Za-z_]\w*)\s*\(", code))
    for group in re.findall(r"from\s+shuffle_lib\.datasets\s+import\s+\(?([\w\s,]+)\)?", code):
        names.update(n.strip().split(" as ")[0] for n in group.split(",") if n.strip())
    return names & known


def wheel_loaders(wheel: Path) -> set[str]:
    """The public functions of ``shuffle_lib/datasets.py`` in the wheel (none without it)."""
    with zipfile.ZipFile(wheel) as archive:
        if "shuffle_lib/datasets.py" not in archive.namelist():
            return set()
        tree = ast.parse(archive.read("shuffle_lib/datasets.py").decode("utf-8"))
    return {node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")}


def notebook_title(path: Path) -> str:
    """The first level-1 heading of a notebook, or its file name."""
    for cell in read_notebook(path):
        if cell.get("cell_type") == "markdown":
            match = re.search(r"^#\s+(.+)$", cell["source"], re.MULTILINE)
            if match:
                return match.group(1).strip()
    return path.stem


# ---------------------------------------------------------------------------------------------
# Requirements
# ---------------------------------------------------------------------------------------------

def normalize(name: str) -> str:
    """A distribution name in PEP 503 form (``Scikit_Learn`` -> ``scikit-learn``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> dict[str, tuple[str, str]]:
    """``name==version`` lines of a lock file: normalized name -> (name as written, version).
    Comments, blank lines and options are skipped."""
    pins = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;]+)", line)
        if match:
            pins[normalize(match.group(1))] = (match.group(1), match.group(2))
    return pins


def runtime_dependencies(pyproject: str) -> list[str]:
    """The names in ``[project] dependencies`` of a ``pyproject.toml`` (specifiers dropped)."""
    declared = tomllib.loads(pyproject).get("project", {}).get("dependencies", [])
    return [re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", d).group(1) for d in declared]


def installed_distributions() -> dict[str, str]:
    """Import name -> distribution name, as the running environment knows them."""
    mapping = dict(KNOWN_DISTRIBUTIONS)
    for module, dists in importlib.metadata.packages_distributions().items():
        if dists and module not in KNOWN_DISTRIBUTIONS:
            mapping[module] = sorted(dists)[0]
    return mapping


@dataclass
class Requirements:
    """What the notebooks need: pinned lines, and what could not be pinned or should not be
    needed at all."""

    pins: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (name, version)
    reasons: dict[str, set[str]] = field(default_factory=dict)  # key -> why it is required
    problems: list[str] = field(default_factory=list)  # portability problems
    loaders: dict[str, set[str]] = field(default_factory=dict)  # notebook -> datasets loaders

    def text(self, wheel: str) -> str:
        """The requirements file, one pin per line with why it is there."""
        lines = [
            "# Shuffle Privacy course pack: what the notebooks and shuffle_lib need, pinned to the",
            "# versions the book was built and tested with (from the repository's",
            "# requirements.lock; constraints.txt pins their own dependencies too). Install with",
            f"#   pip install -r requirements.txt -c constraints.txt wheel/{wheel}",
        ]
        for key in sorted(self.pins):
            name, version = self.pins[key]
            lines.append(f"{name}=={version}  # {', '.join(sorted(self.reasons[key]))}")
        return "\n".join(lines) + "\n"


def derive_requirements(notebooks: Iterable[Path], runtime: Iterable[str],
                        lock: Mapping[str, tuple[str, str]],
                        distributions: Mapping[str, str],
                        loaders: set[str] | None = None) -> Requirements:
    """Pin the library's ``runtime`` dependencies, the kernel, and the distribution of every
    third-party module the code cells of ``notebooks`` import, to their versions in ``lock``
    (from :func:`read_lock`). ``distributions`` maps import names to distributions (see
    :func:`installed_distributions`); ``loaders`` are the data loaders to record per notebook.
    Raises ``ValueError`` when a needed distribution has no pin in the lock."""
    result = Requirements()
    wanted: dict[str, set[str]] = {}
    for name in runtime:
        wanted.setdefault(name, set()).add("shuffle_lib")
    wanted.setdefault(KERNEL, set()).add("Jupyter kernel")
    for path in sorted(notebooks):
        for cell in read_notebook(path):
            if cell.get("cell_type") != "code":
                continue
            code = code_of(cell)
            if used := dataset_loaders(code, loaders or set()):
                result.loaders.setdefault(path.stem, set()).update(used)
            result.problems += [f"{path.name}: uses a path of the repository: {call}"
                                for call in file_reads(code)]
            for module in sorted(imported_modules(code)):
                if module in sys.stdlib_module_names or module == "shuffle_lib":
                    continue
                if module in TOOLCHAIN:
                    result.problems.append(f"{path.name}: imports {module}, which only the "
                                           "book's build has")
                elif module in distributions:
                    wanted.setdefault(distributions[module], set()).add("notebooks")
                else:
                    result.problems.append(f"{path.name}: imports {module}, which no installed "
                                           "distribution provides")
    missing = sorted(name for name in wanted if normalize(name) not in lock)
    if missing:
        raise ValueError(f"no pin in requirements.lock for {', '.join(missing)}: add it to "
                         "requirements.txt and re-lock")
    for name, why in wanted.items():
        key = normalize(name)
        result.pins[key] = lock[key]
        result.reasons.setdefault(key, set()).update(why)
    result.problems = list(dict.fromkeys(result.problems))
    return result


# ---------------------------------------------------------------------------------------------
# The solution check
# ---------------------------------------------------------------------------------------------

def squeeze(text: str) -> str:
    """``text`` with every run of white space collapsed to one space."""
    return " ".join(text.split())


def solution_details(markdown: str) -> tuple[list[str], str]:
    """The bodies of the ``<details>`` blocks whose summary starts with "Solution" (nested
    ``<details>`` included), and the markdown without them."""
    bodies, rest, pos = [], [], 0
    while match := DETAILS_SOLUTION.search(markdown, pos):
        depth, end = 0, len(markdown)
        for tag in DETAILS_TAG.finditer(markdown, match.start()):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                end = tag.end()
                break
        rest.append(markdown[pos:match.start()])
        bodies.append(markdown[match.start():end])
        pos = end
    rest.append(markdown[pos:])
    return bodies, "".join(rest)


def distinctive_lines(text: str) -> list[str]:
    """Lines of ``text`` long enough to identify it (``MIN_LINE``), spaces collapsed; comments,
    ``<summary>`` lines and code fences skipped."""
    lines = (squeeze(line) for line in text.splitlines())
    return [line for line in lines if len(line) >= MIN_LINE
            and not line.startswith(("#", "<summary", "```"))]


@dataclass
class Solutions:
    """Solution lines to look for, and the text a student may see anyway (a line found there
    is shared with the exercise or the chapter, not leaked)."""

    lines: set[str] = field(default_factory=set)
    allowed: list[str] = field(default_factory=list)


def instructor_solutions(notebooks: Iterable[Path]) -> Solutions:
    """Solution lines of the instructor notebooks: code cells tagged ``solution`` and the
    "Solution" ``<details>`` blocks; everything else is allowed text."""
    found = Solutions()
    for path in notebooks:
        for cell in read_notebook(path):
            tags = cell.get("metadata", {}).get("tags", [])
            if cell.get("cell_type") == "code" and SOLUTION_TAG in tags:
                found.lines.update(distinctive_lines(cell["source"]))
            elif cell.get("cell_type") == "markdown":
                bodies, rest = solution_details(cell["source"])
                for body in bodies:
                    found.lines.update(distinctive_lines(body))
                found.allowed.append(squeeze(rest))
            else:
                found.allowed.append(squeeze(cell["source"]))
    return found


def _student_edition() -> ModuleType:
    spec = importlib.util.spec_from_file_location("student_edition",
                                                  ROOT / "tools" / "student_edition.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chapter_solutions(book: Path) -> Solutions:
    """Code lines of the gated solutions in the chapters' MyST sources under ``book``
    (``tools/student_edition.py``'s definition); what ``strip_solutions`` keeps is allowed."""
    edition = _student_edition()
    found = Solutions()
    for chapter in sorted(book.rglob("*.md")):
        if ".ipynb_checkpoints" in chapter.parts:
            continue
        text = chapter.read_text(encoding="utf-8")
        for block in edition.SOLUTION.finditer(text):
            for code in re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", block.group(0),
                                   re.DOTALL):
                found.lines.update(distinctive_lines(code))
        found.allowed.append(squeeze(edition.strip_solutions(text)))
    return found


def visible_text(page: str) -> str:
    """The text of an HTML page as a reader sees it: scripts and styles dropped, tags removed,
    entities decoded."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.DOTALL | re.IGNORECASE)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def student_texts(student: Path) -> dict[Path, str]:
    """Every text file of the student half a reader can see, as text: notebooks (all cells,
    with their tags), website pages (visible text and raw markup) and the site's sources;
    vendored ``_static`` code is skipped."""
    texts = {}
    for path in sorted(student.rglob("*")):
        if not path.is_file() or path.suffix not in WEBSITE_TEXT or "_static" in path.parts:
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":
            cells = read_notebook(path)
            raw = "\n".join(c["source"] for c in cells)
            tags = {t for c in cells for t in c.get("metadata", {}).get("tags", [])}
            if SOLUTION_TAG in tags:
                raw += "\n[a cell tagged solution]"
        elif path.suffix == ".html":
            raw += "\n" + visible_text(raw)
        texts[path] = raw
    return texts


def check_student_half(student: Path, solutions: Iterable[Solutions]) -> list[str]:
    """What of ``solutions`` reaches ``student`` (the pack's student folder): the
    ``solution-start``/``-end`` markers, a "Solution" ``<details>`` block, a cell tagged
    ``solution``, a solution admonition of the website, or any distinctive line of a solution
    that students may not see elsewhere. An empty list means none."""
    solutions = list(solutions)
    lines = set().union(*(s.lines for s in solutions)) if solutions else set()
    allowed = "\n".join(a for s in solutions for a in s.allowed)
    problems = []
    if not lines:
        problems.append("no solution line found in the instructor material: the check would "
                        "prove nothing (are the solution cells still tagged 'solution'?)")
    texts = student_texts(student)
    if not any(p.suffix == ".ipynb" for p in texts):
        problems.append(f"no student notebook under {student}")
    for path, raw in texts.items():
        where = path.relative_to(student.parent)
        for marker in MARKERS:
            if marker in raw:
                problems.append(f"{where}: contains {marker}")
        if DETAILS_SOLUTION.search(raw):
            problems.append(f"{where}: contains a <details><summary>Solution block")
        if "[a cell tagged solution]" in raw:
            problems.append(f"{where}: has a code cell tagged '{SOLUTION_TAG}'")
        if path.suffix == ".html" and re.search(r'class="solution[\s"]', raw):
            problems.append(f"{where}: has a solution admonition")
        flat = squeeze(raw)
        for line in sorted(lines):
            if line in flat and line not in allowed:
                problems.append(f"{where}: solution line {line!r}")
    return problems


# ---------------------------------------------------------------------------------------------
# The pack
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Inputs:
    """Where the pack's parts come from."""

    portable: Path  # portable notebooks: <portable>/{student,instructor}/*.ipynb
    website: Path  # the student edition's website (its index.html)
    wheel_dir: Path  # holds exactly one shuffle_lib-<version>-py3-none-any.whl
    pyproject: Path
    lock: Path
    book: Path | None = None  # the chapters' MyST sources, for the second solution check
    instructor_pdf: Path | None = None  # the instructor edition's book.pdf, if printed


def find_wheel(wheel_dir: Path) -> tuple[Path, str]:
    """The one ``shuffle_lib-<version>-py3-none-any.whl`` in ``wheel_dir``, and its version."""
    wheels = sorted(p for p in wheel_dir.glob("*.whl") if WHEEL_NAME.match(p.name))
    if len(wheels) != 1:
        raise FileNotFoundError(f"expected one shuffle_lib-<version>-py3-none-any.whl in "
                                f"{wheel_dir}, found {[p.name for p in wheels]}")
    return wheels[0], WHEEL_NAME.match(wheels[0].name).group("version")


def extract_data(wheel: Path, out: Path) -> list[str]:
    """Copy the data files the wheel ships (``shuffle_lib/data/*``) into ``out``; return their
    names."""
    names = []
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith("shuffle_lib/data/") and not member.endswith("/"):
                target = out / member.removeprefix("shuffle_lib/data/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(member))
                names.append(target.relative_to(out).as_posix())
    return sorted(names)


def _copy_notebooks(source: Path, out: Path) -> list[Path]:
    notebooks = sorted(source.glob("*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks in {source}: run tools/portable_notebooks.py")
    out.mkdir(parents=True)
    for notebook in notebooks:
        shutil.copy2(notebook, out / notebook.name)
    return [out / n.name for n in notebooks]


def _size(path: Path) -> str:
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() \
        else path.stat().st_size
    return f"{total / 1e6:.1f} MB" if total >= 1e5 else f"{total / 1e3:.0f} kB"


def student_readme(wheel: str, version: str, python: str, pins: Requirements,
                   frontend: str, notebooks: list[Path]) -> str:
    """README-students.md: the website, then four ways to run a notebook, a few steps each."""
    listing = "\n".join(f"- `{p.name}`: {notebook_title(p)}" for p in notebooks)
    install = f"-r requirements.txt -c constraints.txt wheel/{wheel}"
    return f"""# Shuffle Privacy: the course pack (students)

This folder holds the book *Shuffle Privacy* as a website and as Jupyter notebooks, and
`shuffle_lib` {version}, the Python library the notebooks use (Python {python}).

- `student/website/index.html`: the book. Open it in a browser straight from the folder; it needs
  no internet connection. The links in the notebooks ("Theorem 6.1", citations) point into it.
- `student/website/_pdf/book.pdf`: the book as one PDF, for reading on a tablet or printing;
  each chapter's own PDF is beside it (and in the download menu of its page on the website).
- `student/notebooks/`: one notebook per chapter, with the exercises (not their solutions).
- `wheel/{wheel}`: the library; `requirements.txt` and `constraints.txt`: the
  versions the book was tested with. `data/`: the data sets, for reference only: the library
  already contains them (`shuffle_lib.datasets`), so no notebook needs a path to a file.

The first run of some cells in a session is slower: the library compiles its fast loops then.

## On the course JupyterHub

1. Upload `coursepack-student.zip` (the upload button of the file browser), then in a
   Terminal: `unzip coursepack-student.zip && cd coursepack`.
2. In the same Terminal, make a kernel with exactly the tested versions:
   ```bash
   python3 -m venv ~/shuffle-venv
   ~/shuffle-venv/bin/pip install {install}
   ~/shuffle-venv/bin/python -m ipykernel install --user --name shuffle-privacy \\
       --display-name "Python (Shuffle Privacy)"
   ```
3. Open a notebook in `student/notebooks/` and choose the kernel "Python (Shuffle Privacy)"
   (Kernel > Change Kernel). Quicker but less exact: `pip install --user wheel/{wheel}`
   and keep the default kernel (its Python must be {python}).

## In Google Colab

1. File > Upload notebook, and pick a notebook from `student/notebooks/`.
2. Open the Files panel (the folder icon on the left) and upload `wheel/{wheel}`.
3. Add a cell at the top and run it:
   ```
   !pip install -q {wheel}
   ```
   If pip asks for it, restart (Runtime > Restart session), then Runtime > Run all. pip adds
   only what Colab lacks and keeps Colab's numpy, scipy and the rest (the library does not pin
   them; `requirements.txt` lists the tested versions). The links to the book do not work
   inside Colab: open `student/website/index.html` on your computer.

## In VS Code

1. Install the extensions "Python" and "Jupyter".
2. Open this folder (File > Open Folder), then in the Terminal make an environment as in
   "On your computer" below (steps 1 and 2).
3. Open a notebook in `student/notebooks/`, click "Select Kernel" (top right) and pick `.venv`.

## On your computer

Python {python} from python.org, your system or conda. In a terminal, in this folder:

1. `python3 -m venv .venv` (Windows: `py -m venv .venv`)
2. `.venv/bin/pip install {install} {frontend}`
   (Windows: `.venv\\Scripts\\pip install ...`, same arguments)
3. `.venv/bin/jupyter lab student/notebooks`
   (Windows: `.venv\\Scripts\\jupyter lab student\\notebooks`); the browser opens JupyterLab.

## The notebooks

{listing}
"""


def lecturer_readme(wheel: str, version: str, pins: Requirements, data: list[str],
                    counts: dict[str, int], sizes: dict[str, str]) -> str:
    """README-lecturers.md: contents, regeneration, how solutions stay out of the student half."""
    loaders = "\n".join(f"| `{name}.ipynb` | {', '.join(f'`{f}`' for f in sorted(found))} |"
                        for name, found in sorted(pins.loaders.items()))
    problems = "\n".join(f"- {p}" for p in pins.problems) or "None."
    data_list = ", ".join(f"`{d}`" for d in data) or "none"
    return f"""# Shuffle Privacy: the course pack (lecturers)

## What is in it

- `student/notebooks/` ({sizes['student/notebooks']}): {counts['student']} portable notebooks
  without solutions: plain markdown and `$...$` math, numbered theorems and exercises, links into
  the website; they run in any Jupyter client with the wheel installed.
- `student/website/` ({sizes['student/website']}): the student edition of the website (every
  exercise, no solution); open `index.html`, no server or internet needed.
- `instructor/notebooks/` ({sizes['instructor/notebooks']}): the same {counts['instructor']}
  notebooks with each solution after its exercise, folded in `<details>` (its code cells tagged
  `solution`).
- `instructor/book.pdf`: the whole book with every solution open, as PDF (the student
  edition's PDFs are in `student/website/_pdf/`).
- `wheel/{wheel}` ({sizes['wheel']}): `shuffle_lib` {version}, with its data.
- `requirements.txt`: the library's dependencies and every package the notebooks import, pinned
  to the tested versions; `constraints.txt`: every package of the tested environment (the
  repository's `requirements.lock`).
- `data/` ({sizes['data']}): the data files inside the wheel ({data_list}) with their sources
  and licences (`data/README.md`); the notebooks load them through `shuffle_lib.datasets`, never
  by path.
- `README-students.md`: how to run the notebooks on a course JupyterHub, in Colab, in VS Code or
  locally.

`coursepack.zip` holds all of this; `coursepack-student.zip` holds everything except
`instructor/` and this file: hand that one out as it is.

Notebooks that use a bundled data set (`shuffle_lib.datasets`; `anes96` comes with statsmodels):

| Notebook | Loaders |
|---|---|
{loaders}

Portability problems found in the notebooks' code (a module only the book's build has, a path
of the repository):

{problems}

## Regenerating it

In a clone of the repository, `make coursepack` (Python 3.11+ and `make`; on a fresh clone it
first builds the book and the student edition, which takes most of the time). It runs:

1. `make student`: the website with solutions (`make book`), the sources copied without
   solutions and built as the student website, and the check that no solution reaches it;
2. `tools/portable_notebooks.py`: both editions of every chapter as portable notebooks (in
   `_build/coursepack-portable`), their links pointing at `../../student/website/` (set
   `COURSEPACK_BASE_URL` to your hosted copy of the site, e.g.
   `make coursepack COURSEPACK_BASE_URL=https://example.org/shuffle/`);
3. `pip wheel` of `shuffle_lib` from a clean copy of the sources (offline, no dependencies);
4. `tools/coursepack.py`: this folder, the two zips, the requirements (derived from the
   notebooks' imports and `pyproject.toml`, versions from `requirements.lock`), the READMEs, and
   the solution check below.

## How solutions stay out of the student half

The chapters mark each solution with ```` ```{{solution-start}} ```` ...
```` ```{{solution-end}} ````. `tools/student_edition.py` cuts these blocks out of the sources
(and refuses a chapter whose markers do not pair up); both the student website and the student
notebooks are made from the cut sources, so a solution is never hidden, only absent.

`tools/coursepack.py` then checks the student half (`student/`) before it writes a zip, and fails
with the file and line if it finds: the `solution-start`/`solution-end` markers; a
`<details><summary>Solution` block; a notebook cell tagged `solution`; a solution admonition of
the website; or any line (40 characters or more) of any solution, taken both from the instructor
notebooks and from the chapters' sources, that is not also part of what students may see (the
exercise or the chapter). Run the check alone on a pack with
`python tools/coursepack.py --check _build/coursepack`. `make student` runs the same kind of
check on the student website (`tests/test_student_edition.py`), and `tests/test_coursepack.py`
shows that the pack's check catches a planted solution.
"""


def write_zip(source: Path, target: Path, keep: Callable[[Path], bool]) -> int:
    """Zip the files of ``source`` that ``keep`` accepts (paths relative to ``source``) under a
    top folder named after ``source``; return how many."""
    files = [p for p in sorted(source.rglob("*"))
             if p.is_file() and keep(p.relative_to(source))]
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, (Path(source.name) / path.relative_to(source)).as_posix())
    tmp.replace(target)
    return len(files)


def for_students(relative: Path) -> bool:
    """Whether a file of the pack (path relative to its root) goes into the students' zip."""
    return relative.parts[0] != "instructor" and relative.name != "README-lecturers.md"


def assemble(inputs: Inputs, out: Path,
             distributions: Mapping[str, str] | None = None) -> Requirements:
    """Build the pack folder ``out`` from ``inputs`` (without the zips and the check); return
    the requirements it derived."""
    wheel, version = find_wheel(inputs.wheel_dir)
    if not (inputs.website / "index.html").is_file():
        raise FileNotFoundError(f"{inputs.website}/index.html is missing: run `make student`")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    student = _copy_notebooks(inputs.portable / "student", out / "student" / "notebooks")
    instructor = _copy_notebooks(inputs.portable / "instructor", out / "instructor" / "notebooks")
    if {p.name for p in student} != {p.name for p in instructor}:
        raise ValueError("the student and instructor notebooks differ in their chapters: "
                         f"{sorted({p.name for p in student} ^ {p.name for p in instructor})}")
    shutil.copytree(inputs.website, out / "student" / "website",
                    ignore=shutil.ignore_patterns(".buildinfo", "__pycache__",
                                                  ".ipynb_checkpoints"))
    if inputs.instructor_pdf is not None:
        shutil.copy2(inputs.instructor_pdf, out / "instructor" / "book.pdf")
    (out / "wheel").mkdir()
    shutil.copy2(wheel, out / "wheel" / wheel.name)
    data = extract_data(wheel, out / "data")
    pyproject = inputs.pyproject.read_text(encoding="utf-8")
    lock_text = inputs.lock.read_text(encoding="utf-8")
    lock = read_lock(lock_text)
    requirements = derive_requirements(
        student + instructor, runtime_dependencies(pyproject), lock,
        installed_distributions() if distributions is None else distributions,
        wheel_loaders(wheel))
    (out / "requirements.txt").write_text(requirements.text(wheel.name), encoding="utf-8")
    (out / "constraints.txt").write_text(
        "# Every package of the environment the book was tested in (requirements.lock).\n"
        + lock_text, encoding="utf-8")
    python = tomllib.loads(pyproject).get("project", {}).get("requires-python", ">=3.11")
    python = python.replace(">=", "") + " or newer" if python.startswith(">=") else python
    frontend = "{}=={}".format(*lock.get(LOCAL_FRONTEND, (LOCAL_FRONTEND, "?"))) \
        if LOCAL_FRONTEND in lock else LOCAL_FRONTEND
    (out / "README-students.md").write_text(
        student_readme(wheel.name, version, python, requirements, frontend, student),
        encoding="utf-8")
    sizes = {name: _size(out / name) for name in
             ("student/notebooks", "student/website", "instructor/notebooks", "wheel", "data")}
    (out / "README-lecturers.md").write_text(
        lecturer_readme(wheel.name, version, requirements, data,
                        {"student": len(student), "instructor": len(instructor)}, sizes),
        encoding="utf-8")
    return requirements


def check_pack(pack: Path, book: Path | None = None) -> list[str]:
    """The solution check of a pack folder: solutions from its instructor notebooks and, when
    ``book`` is given, from the chapters' MyST sources."""
    solutions = [instructor_solutions(sorted((pack / "instructor" / "notebooks").glob("*.ipynb")))]
    if book is not None:
        solutions.append(chapter_solutions(book))
    return check_student_half(pack / "student", solutions)


def build(inputs: Inputs, out: Path, strict: bool = False,
          distributions: Mapping[str, str] | None = None) -> tuple[list[str], Requirements]:
    """Assemble the pack, check it, and only then write ``<out>.zip`` and
    ``<out>-student.zip``. Returns the problems found (portability problems are problems only
    when ``strict``; the zips are written only when there are none) and the requirements."""
    requirements = assemble(inputs, out, distributions)
    problems = check_pack(out, inputs.book)
    if strict:
        problems += requirements.problems
    for stale in (out.with_suffix(".zip"), out.with_name(out.name + "-student.zip")):
        stale.unlink(missing_ok=True)
    if not problems:
        write_zip(out, out.with_suffix(".zip"), lambda _: True)
        write_zip(out, out.with_name(out.name + "-student.zip"), for_students)
    return problems, requirements


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    build_dir = ROOT / "_build"
    parser.add_argument("--portable", type=Path, default=build_dir / "portable",
                        help="portable notebooks (<dir>/student, <dir>/instructor)")
    parser.add_argument("--website", type=Path,
                        default=build_dir / "student" / "_build" / "html")
    parser.add_argument("--wheel-dir", type=Path, default=build_dir / "wheel")
    parser.add_argument("--out", type=Path, default=build_dir / "coursepack")
    parser.add_argument("--instructor-pdf", type=Path,
                        default=build_dir / "html" / "_pdf" / "book.pdf",
                        help="the instructor edition's PDF (left out if it does not exist)")
    parser.add_argument("--book", type=Path, default=ROOT / "book",
                        help="chapters' sources for the solution check ('' to skip)")
    parser.add_argument("--strict", action="store_true",
                        help="portability problems of the notebooks are errors")
    parser.add_argument("--check", type=Path, metavar="PACK",
                        help="only check an existing pack folder for solutions")
    args = parser.parse_args(argv)
    book = args.book if args.book and str(args.book) not in ("", ".") else None
    if args.check:
        problems = check_pack(args.check, book)
    else:
        pdf = args.instructor_pdf if args.instructor_pdf.is_file() else None
        inputs = Inputs(args.portable, args.website, args.wheel_dir, ROOT / "pyproject.toml",
                        ROOT / "requirements.lock", book, pdf)
        try:
            problems, requirements = build(inputs, args.out, args.strict)
        except (FileNotFoundError, ValueError) as error:
            print(f"coursepack: {error}", file=sys.stderr)
            return 2
        if not args.strict:
            for problem in requirements.problems:
                print(f"coursepack: warning: {problem}", file=sys.stderr)
    if problems:
        print(f"coursepack: FAILED, {len(problems)} problem(s)"
              + ("" if args.check else "; no zip written") + ":", file=sys.stderr)
        for problem in problems[:50]:
            print(f"  {problem}", file=sys.stderr)
        return 1
    pack = args.check or args.out
    searched = len(instructor_solutions((pack / "instructor" / "notebooks").glob("*.ipynb")).lines
                   | (chapter_solutions(book).lines if book else set()))
    verdict = f"none of {searched} solution lines (nor any solution marker) in student/"
    if args.check:
        print(f"{pack}: {verdict}")
    else:
        print(f"course pack: {pack} ({_size(pack)}), {pack.with_suffix('.zip')}, "
              f"{pack.with_name(pack.name + '-student.zip')}; {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
