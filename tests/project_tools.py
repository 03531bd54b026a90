"""Helpers the tests share: the project's tools loaded as modules, the wheel built offline, and
a readable report of problems grouped by page or notebook."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_tool(name: str) -> ModuleType:
    """``tools/<name>.py`` as the module ``name`` (the tools are scripts, not a package); it is
    registered in ``sys.modules`` first, where dataclasses look their module up."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build_wheel(work: Path) -> Path:
    """The wheel of ``shuffle_lib``, built offline (setuptools from this environment, no build
    isolation, no index) from a copy of ``pyproject.toml`` and ``shuffle_lib/`` in
    ``work/source``, into ``work/dist``; returns its path."""
    source = work / "source"
    source.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", source)
    shutil.copytree(ROOT / "shuffle_lib", source / "shuffle_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet",
                    "--disable-pip-version-check", "--no-deps", "--no-build-isolation",
                    "--no-index", "--no-cache-dir", "--wheel-dir", str(work / "dist"),
                    str(source)], capture_output=True, text=True, check=True, timeout=600)
    (wheel,) = (work / "dist").glob("shuffle_lib-*.whl")
    return wheel


def problem_report(problems: dict[str, list[str]], where: str, per_page: int = 8) -> str:
    """``problems`` (``{place: [problem, ...]}``) as lines, at most ``per_page`` per place;
    ``where`` names the places ("pages", "notebooks")."""
    lines = [f"{sum(map(len, problems.values()))} problems in {len(problems)} {where}:"]
    for page, found in sorted(problems.items()):
        lines.append(f"  {page}:")
        lines += [f"    - {problem[:300]}" for problem in found[:per_page]]
        if len(found) > per_page:
            lines.append(f"    ... and {len(found) - per_page} more")
    return "\n".join(lines)
