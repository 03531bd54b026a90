"""Wire the book's JupyterLab support into the project's environment (run by ``make setup``).

- ``book_lab.pth`` in the environment's site-packages puts this folder on ``sys.path``, so that
  the server and the kernel can import ``book_contents`` and ``book_kernel``;
- ``etc/jupyter/jupyter_server_config.json`` in the environment makes the server use
  ``book_contents.BookContentsManager`` (Jupytext's contents manager plus the chapters' JupyterLab
  view; Jupytext's own server extension keeps a contents manager that already handles text
  notebooks);
- the ``shuffle-privacy`` kernel loads the IPython extension ``book_kernel``.

Run with the environment's interpreter: ``.venv/bin/python tools/jupyterlab/install.py``.
"""

from __future__ import annotations

import json
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL = "shuffle-privacy"
EXTENSION_ARG = "--IPKernelApp.extensions=book_kernel"


def main() -> None:
    prefix = Path(sys.prefix)
    (Path(sysconfig.get_paths()["purelib"]) / "book_lab.pth").write_text(f"{HERE}\n")

    # the environment's own config file (the .d folder next to it only enables extensions)
    server_config = prefix / "etc" / "jupyter" / "jupyter_server_config.json"
    server_config.parent.mkdir(parents=True, exist_ok=True)
    server_config.write_text(json.dumps(
        {"ServerApp": {"contents_manager_class": "book_contents.BookContentsManager"}}, indent=2))

    kernel_json = prefix / "share" / "jupyter" / "kernels" / KERNEL / "kernel.json"
    spec = json.loads(kernel_json.read_text())
    if EXTENSION_ARG not in spec["argv"]:
        spec["argv"].append(EXTENSION_ARG)
    kernel_json.write_text(json.dumps(spec, indent=1))
    print(f"JupyterLab support: {server_config.name}, book_lab.pth, kernel {KERNEL} + book_kernel")


if __name__ == "__main__":
    main()
