"""The library as a researcher gets it: a wheel, installed into a fresh virtual environment.

The wheel is built from a copy of ``pyproject.toml`` and ``shuffle_lib/`` (offline: setuptools
from the project's environment, ``--no-build-isolation``) and installed, without its
dependencies, into a new virtual environment that has no access to the repository. The
dependencies come from the project's environment through a ``.pth`` file, which only adds that
folder to ``sys.path``: its editable ``shuffle_lib`` stays out of reach (each test checks that
``shuffle_lib`` is imported from the new environment). The installed package is then made
read-only, and every run happens with the working directory outside the repository:

- the quick start (README.md and the book's page) prints what the documents show;
- the numba kernels and the bundled data work from the read-only installation, run by a user
  who cannot write anywhere numba would cache (a home folder without write permission; as root,
  the process first gives up the capabilities that let root write through permissions,
  ``CAP_DAC_OVERRIDE`` and its kin): nothing is printed, nothing is written, and the kernels run
  uncached;
- with ``NUMBA_CACHE_DIR`` writable, the same kernels are cached there (and a second process
  loads them from it), still without a file written into the installation.

Marker ``wheel`` (part of ``make test``); about 30-60 s on a busy 2-core machine.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from doc_snippets import ROOT, all_snippets
from project_tools import build_wheel

import shuffle_lib

pytestmark = pytest.mark.wheel

PROJECT_SITE = sysconfig.get_paths()["purelib"]  # the dependencies (numpy, scipy, numba, ...)
# Linux capabilities that let root ignore file permissions, and prctl's PR_CAPBSET_DROP
DAC_CAPABILITIES = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
PR_CAPBSET_DROP = 24
WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH

# Runs the quick-start snippets given as JSON on stdin; prints what each one printed.
QUICKSTART_RUNNER = """
import contextlib, io, json, sys
import shuffle_lib
assert shuffle_lib.__file__.startswith(sys.argv[1]), shuffle_lib.__file__
outputs = []
for where, code in json.load(sys.stdin):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, where, "exec"), {"__name__": "__quickstart__"})
    outputs.append(out.getvalue())
print(json.dumps(outputs))
"""

# Every module with numba kernels, and the bundled data files.
KERNELS = """
import json, sys
import numpy as np
import pandas as pd
import shuffle_lib
from shuffle_lib import datasets, dsigma, permutations, swapping
assert shuffle_lib.__file__.startswith(sys.argv[1]), shuffle_lib.__file__
frame = pd.DataFrame({"size": [1, 1, 2, 2], "county": ["A", "B", "C", "D"]})
result = {
    "kendall": permutations.kendall_tau_distance([0, 1, 2, 3], [1, 0, 3, 2]),
    "derangement": bool((permutations.random_derangement(6, rng=0) != np.arange(6)).all()),
    "bfs": dsigma.bfs_reference_permutation(dsigma.groups_within_radius(np.arange(5.0), 1.0))
    .tolist(),
    "swapped": swapping.swap(frame, "size", "county", p=1.0, rng=0).county.tolist(),
    "adult_test_rows": len(datasets.adult_table("test")),
    "tenure_rows": len(datasets.massachusetts_1940_tenure()),
}
kernels = {"permutations._inversions": permutations._inversions,
           "permutations._fill_uniform_derangement": permutations._fill_uniform_derangement,
           "dsigma._bfs_all": dsigma._bfs_all, "swapping._swap_sources": swapping._swap_sources}
result["caches"] = {name: type(k._cache).__name__ for name, k in kernels.items()}
result["cache_hits"] = sum(sum(k.stats.cache_hits.values()) for k in kernels.values())
print(json.dumps(result))
"""
EXPECTED_KERNEL_RESULTS = {"kendall": 2, "derangement": True, "bfs": [1, 0, 2, 3, 4],
                           "swapped": ["B", "A", "D", "C"]}


@dataclass(frozen=True)
class Installation:
    python: Path  # the fresh environment's interpreter
    site: Path  # its site-packages
    package: Path  # the installed shuffle_lib (read-only)
    wheel: Path
    work: Path  # a scratch folder outside the repository


def _run(args: list, **options: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, check=True,
                          timeout=600, **options)


def _set_writable(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IWUSR if writable else mode & ~WRITE_BITS)


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installation]:
    work = tmp_path_factory.mktemp("wheel")
    try:
        wheel = build_wheel(work)
        _run([sys.executable, "-m", "venv", "--without-pip", work / "venv"])
        python = work / "venv" / "bin" / "python"
        _run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
              "--disable-pip-version-check", "--no-deps", "--no-index", "--no-cache-dir", wheel])
        site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
                         ).stdout.strip())
        # only after the install: through this file pip would see the editable shuffle_lib
        (site / "_project_dependencies.pth").write_text(PROJECT_SITE + "\n", encoding="utf-8")
        package = site / "shuffle_lib"
        _set_writable(package, False)
        (work / "home").mkdir(mode=0o555)  # a home folder nobody can write
        yield Installation(python, site, package, wheel, work)
    finally:
        _set_writable(work, True)
        shutil.rmtree(work, ignore_errors=True)


def _environment(installation: Installation, **extra: str) -> dict[str, str]:
    """The caller's environment without anything that points at the repository or a cache."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV",
               "XDG_CACHE_HOME")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("NUMBA_")}
    env.update(HOME=str(installation.work / "home"), PYTHONNOUSERSITE="1", **extra)
    return env


def _drop_dac_capabilities() -> None:
    """In the child before ``exec``: remove from the bounding set the capabilities that let root
    write to read-only files, so the program it runs has none of them."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in DAC_CAPABILITIES:
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _unprivileged() -> dict[str, object]:
    """``subprocess`` options under which read-only permissions hold (they already do for every
    user but root)."""
    if os.geteuid() != 0:
        return {}
    try:
        subprocess.run(["true"], preexec_fn=_drop_dac_capabilities, check=True)
    except (subprocess.SubprocessError, OSError):
        pytest.skip("running as root without CAP_SETPCAP: cannot give up write access, so a "
                    "read-only installation cannot be tested")
    return {"preexec_fn": _drop_dac_capabilities}


def _kernels(installation: Installation, **extra: str) -> tuple[dict, str]:
    script = installation.work / "kernels.py"
    script.write_text(KERNELS, encoding="utf-8")
    done = subprocess.run([str(installation.python), str(script), str(installation.site)],
                          capture_output=True, text=True, timeout=600, cwd=installation.work,
                          env=_environment(installation, **extra), **_unprivileged())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_wheel_ships_the_data_the_type_marker_and_one_version(installed: Installation) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        header = wheel.read(metadata).decode()
    data = {f"shuffle_lib/data/{p.name}" for p in (ROOT / "shuffle_lib" / "data").iterdir()
            if p.is_file()}
    assert data <= names, f"data files missing from the wheel: {sorted(data - names)}"
    assert "shuffle_lib/py.typed" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith((".nbi", ".nbc", ".pyc"))]
    assert f"\nVersion: {shuffle_lib.__version__}\n" in header
    assert installed.wheel.name.startswith(f"shuffle_lib-{shuffle_lib.__version__}-")
    versions = ("import importlib.metadata as m, shuffle_lib; "
                "print(shuffle_lib.__version__, m.version('shuffle_lib'), shuffle_lib.__file__)")
    reported = _run([installed.python, "-c", versions], cwd=installed.work,
                    env=_environment(installed)).stdout.split()
    assert reported[:2] == [shuffle_lib.__version__] * 2
    assert Path(reported[2]).is_relative_to(installed.package)


def test_quick_start_runs_from_the_installed_wheel(installed: Installation) -> None:
    snippets = all_snippets()
    runner = installed.work / "quickstart.py"
    runner.write_text(QUICKSTART_RUNNER, encoding="utf-8")
    done = _run([installed.python, runner, installed.site], cwd=installed.work,
                env=_environment(installed),
                input=json.dumps([[s.where, s.code] for s in snippets]))
    assert done.stderr == ""
    for snippet, printed in zip(snippets, json.loads(done.stdout), strict=True):
        assert printed == snippet.expected, snippet.where


def test_read_only_install_runs_kernels_without_any_cache(installed: Installation) -> None:
    before = _files(installed.package)
    result, stderr = _kernels(installed)
    assert stderr == ""  # no warning, no error: the fallback is silent
    assert {k: result[k] for k in EXPECTED_KERNEL_RESULTS} == EXPECTED_KERNEL_RESULTS
    assert result["adult_test_rows"] > 16_000 and result["tenure_rows"] > 0
    # numba found no folder to cache in, so every kernel was compiled without a cache
    assert set(result["caches"].values()) == {"NullCache"}, result["caches"]
    assert _files(installed.package) == before
    assert not list((installed.work / "home").iterdir())


def test_read_only_install_caches_kernels_in_numba_cache_dir(installed: Installation) -> None:
    cache = installed.work / "numba-cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)  # whatever the umask: the kernels may run as another user
    before = _files(installed.package)
    first, stderr = _kernels(installed, NUMBA_CACHE_DIR=str(cache))
    assert stderr == ""
    assert set(first["caches"].values()) == {"FunctionCache"}, first["caches"]
    assert list(cache.rglob("*.nbi")), "numba wrote no cache index into NUMBA_CACHE_DIR"
    second, stderr = _kernels(installed, NUMBA_CACHE_DIR=str(cache))
    assert stderr == ""
    assert second["cache_hits"] > 0, "the second process compiled again instead of loading"
    assert {k: second[k] for k in EXPECTED_KERNEL_RESULTS} == EXPECTED_KERNEL_RESULTS
    assert _files(installed.package) == before
