"""The API reference (book/back/api) covers the whole public library.

Sphinx's ``automodule :members:`` silently skips a member without a docstring and knows nothing of
a module no page names, so both are checked here, without building the book: every public module
has a page with its ``automodule`` directive, listed in ``_toc.yml``, and every public function
and class of it has a docstring.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
import yaml

import shuffle_lib
import shuffle_lib.accounting

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "book" / "back" / "api"


def _public_modules() -> list[str]:
    names = []
    for package in (shuffle_lib, shuffle_lib.accounting):
        names += [f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__)
                  if not m.name.startswith("_")]
    return sorted(names)


def _documented_modules() -> dict[str, Path]:
    found = {}
    for page in API.glob("*.md"):
        for name in re.findall(r"^\.\. automodule:: (\S+)\n   :members:", page.read_text(),
                               re.MULTILINE):
            found[name] = page
    return found


def _toc_files() -> set[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = set()
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            files.add(chapter["file"])
            files.update(section["file"] for section in chapter.get("sections", []))
    return files


def test_every_public_module_has_a_page_in_the_table_of_contents() -> None:
    documented = _documented_modules()
    assert sorted(documented) == [m for m in _public_modules() if m != "shuffle_lib.accounting"]
    toc = _toc_files()
    for module, page in documented.items():
        assert str(page.relative_to(ROOT).with_suffix("")) in toc, (module, page)


@pytest.mark.parametrize("module", _public_modules())
def test_every_public_function_and_class_has_a_docstring(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [name for name, obj in vars(mod).items()
               if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
               and obj.__module__ == module and not (obj.__doc__ or "").strip()]
    assert not missing, f"{module}: no docstring, so no API entry, for {missing}"
