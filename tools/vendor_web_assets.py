"""Vendor the website's JavaScript so the built book works without internet.

``make setup`` (hence ``make book`` and ``make test``) runs this script. It downloads three pinned
packages from the npm registry, checks each tarball against the sha512 recorded below (the
registry's ``dist.integrity``), and unpacks the files the website needs into ``_vendor/``
(git-ignored), which ``_config.yml`` lists in ``html_static_path``, so Sphinx copies them to
``_build/html/_static/``:

- MathJax 3.2.2 (``_vendor/mathjax/``): ``tex-chtml.js`` (``mathjax_path``) plus the files it
  loads on demand: TeX extensions (autoload), the CHTML web fonts, the menu and its accessibility
  modules (and the speech-rule engine they use).
- RequireJS 2.3.7 (``_vendor/requirejs/require.js``) and @jupyter-widgets/html-manager 1.0.6
  (``_vendor/html-manager/``, ``embed-amd.js`` and its fonts): MyST-NB loads both (setting
  ``nb_ipywidgets_js``) on pages whose notebook saved widget state, to draw the widgets
  (tqdm progress bars) from that state. ``html-manager/require-paths.js``, written here, tells
  RequireJS where the manager's fonts are (by default it looks for them next to the page).

The script is idempotent: it does nothing when ``_vendor/.pins`` already records these pins.
Only the Python standard library is used. The registry can be overridden with
``NPM_CONFIG_REGISTRY`` (a mirror); the checksums still apply.

The module is also a small Sphinx extension (``sphinx.local_extensions`` in ``_config.yml``) that
wires the vendored files into the site; see ``setup``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = os.environ.get("NPM_CONFIG_REGISTRY", "https://registry.npmjs.org").rstrip("/")


@dataclass(frozen=True)
class Package:
    name: str  # npm name
    version: str
    sha512: str  # npm "integrity", base64 sha512 of the .tgz
    dest: str  # directory under _vendor/
    keep: tuple[str, ...]  # paths inside the tarball (a trailing "/" keeps a whole directory)
    strip: str  # prefix removed from kept paths

    @property
    def url(self) -> str:
        basename = self.name.rsplit("/", 1)[-1]
        return f"{REGISTRY}/{self.name}/-/{basename}-{self.version}.tgz"


HTML_MANAGER_FONTS = tuple(
    f"package/dist/{name}" for name in (
        "1551f4f60c37af51121f.woff2", "2285773e6b4b172f07d9.woff", "23f19bb08961f37aaf69.eot",
        "2f517e09eb2ca6650ff5.svg", "4689f52cc96215721344.svg", "491974d108fe4002b2aa.ttf",
        "527940b104eb2ea366c8.ttf", "77206a6bb316fa0aded5.eot", "7a3337626410ca2f4071.woff2",
        "7a8b4f130182d19a2d7c.svg", "9bbb245e67a133f6e486.eot", "bb58e57c48a3e911f15f.woff",
        "be9ee23c0c6390141475.ttf", "d878b0a6a1144760244f.woff2", "eeccf4f66002c6f2ba24.woff",
    )
)

PACKAGES = (
    Package(
        name="mathjax", version="3.2.2",
        sha512="Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
        dest="mathjax",
        keep=("package/LICENSE", "package/es5/tex-chtml.js", "package/es5/input/tex/",
              "package/es5/output/chtml/", "package/es5/ui/", "package/es5/a11y/",
              "package/es5/sre/"),
        strip="package/es5/",
    ),
    Package(
        name="requirejs", version="2.3.7",
        sha512="DouTG8T1WanGok6Qjg2SXuCMzszOo0eHeH9hDZ5Y4x8Je+9JB38HdTLT4/VA8OaUhBa0JPVHJ0pyBkM1z+pDsw==",
        dest="requirejs",
        keep=("package/require.js",),
        strip="package/",
    ),
    Package(
        name="@jupyter-widgets/html-manager", version="1.0.6",
        sha512="+Mn+Ra8wyIHrYaUpfmf9A3dsLkt/NuwzPQN8sthdxBD35VV5cOJbpmgMhNR27n/rmP3mKyEe0PWCJrtZrXTXDQ==",
        dest="html-manager",
        keep=("package/LICENSE", "package/dist/embed-amd.js", *HTML_MANAGER_FONTS),
        strip="package/dist/",
    ),
)


# Each webpack bundle in embed-amd.js (the manager, base, controls) finds its fonts through the
# RequireJS URL of its named module, which is resolved against the page's folder unless RequireJS
# is told otherwise: map every @jupyter-widgets module name to this folder.
REQUIRE_PATHS_JS = """\
// Written by tools/vendor_web_assets.py: html-manager's files (its fonts) sit next to this script.
(function () {
  var here = document.currentScript.src.replace(/[?#].*$/, "").replace(/\\/[^\\/]*$/, "");
  require.config({paths: {"@jupyter-widgets": here, "@jupyter-widgets/html-manager/dist": here}});
})();
"""


def pins() -> str:
    """The stamp written after a successful vendoring: one line per package (and generated file)."""
    generated = hashlib.sha256(REQUIRE_PATHS_JS.encode()).hexdigest()
    return "".join(f"{p.name}@{p.version} sha512-{p.sha512}\n" for p in PACKAGES) + (
        f"html-manager/require-paths.js sha256-{generated}\n")


def download(package: Package) -> bytes:
    request = urllib.request.Request(package.url, headers={"User-Agent": "shuffle-privacy-setup"})
    with urllib.request.urlopen(request, timeout=120) as response:
        data = response.read()
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != package.sha512:
        raise SystemExit(f"checksum mismatch for {package.url}: sha512-{digest}, "
                         f"expected sha512-{package.sha512}")
    return data


def unpack(package: Package, data: bytes, out: Path) -> int:
    """Extract the kept members of the tarball into ``out / package.dest``; return the count."""
    found = set()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            name = member.name
            if not member.isfile() or not any(
                    name == k or (k.endswith("/") and name.startswith(k)) for k in package.keep):
                continue
            # LICENSE sits above the stripped prefix: it keeps its bare name
            relative = name.removeprefix(package.strip) if name.startswith(package.strip) \
                else name.rsplit("/", 1)[-1]
            target = (out / package.dest / relative).resolve()
            if not target.is_relative_to(out.resolve()):
                raise SystemExit(f"unsafe path in {package.url}: {name}")
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None
            target.write_bytes(source.read())
            found.add(name)
    missing = [k for k in package.keep if not k.endswith("/") and k not in found]
    if missing:
        raise SystemExit(f"{package.name}@{package.version}: missing from the tarball: {missing}")
    return len(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_vendor")
    parser.add_argument("--force", action="store_true", help="re-download even if up to date")
    parser.add_argument("--print-pins", action="store_true", help="print the pins and exit")
    args = parser.parse_args()
    if args.print_pins:
        print(json.dumps([{"name": p.name, "version": p.version, "url": p.url,
                           "integrity": f"sha512-{p.sha512}"} for p in PACKAGES], indent=2))
        return
    stamp = args.out / ".pins"
    if not args.force and stamp.is_file() and stamp.read_text() == pins():
        return
    staging = args.out.with_name(args.out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for package in PACKAGES:
        count = unpack(package, download(package), staging)
        print(f"vendored {package.name}@{package.version}: {count} files -> "
              f"{args.out.name}/{package.dest}/")
    (staging / "html-manager" / "require-paths.js").write_text(REQUIRE_PATHS_JS)
    (staging / ".pins").write_text(pins())
    shutil.rmtree(args.out, ignore_errors=True)
    staging.rename(args.out)


def _check_vendored(app) -> None:
    """``builder-inited``: fail the build, with the fix, when ``_vendor/`` is missing or stale
    (the site would otherwise build and then show raw LaTeX). A current ``_vendor/`` is also
    copied into an existing site's ``_static/`` here, because Sphinx copies static files only
    when some page is rewritten, and new pins alone rewrite none."""
    from sphinx.errors import ExtensionError

    for static in app.config.html_static_path:
        source = Path(app.confdir, static)
        stamp = source / ".pins"
        if source.name != "_vendor":
            continue
        if not (stamp.is_file() and stamp.read_text() == pins()):
            raise ExtensionError(f"{source} is missing or out of date: run `make setup` "
                                 "(or python tools/vendor_web_assets.py)")
        site_static = Path(app.outdir, "_static")
        if site_static.is_dir():
            shutil.copytree(source, site_static, dirs_exist_ok=True)


def _drop_duplicate_inline_scripts(app, env) -> None:
    """``env-updated``: sphinx-thebe 0.3.1 adds its inline ``const THEBE_JS_URL = ...`` with
    filename None, which Sphinx 7.4 adds again as filename '' when writing starts; the page then
    declares the constant twice, a SyntaxError in every page's console. Drop the first copy."""
    scripts = getattr(app.builder, "_js_files", None)
    if scripts is not None:
        scripts[:] = [js for js in scripts if js.filename is not None]


def setup(app) -> dict:
    """Sphinx extension: what the offline site needs that ``_config.yml`` cannot express.

    - MathJax on every page (``html_assets_policy = "always"``): chapter titles with math appear
      in every page's navigation, also on pages without math of their own (the index, search).
    - checks that ``_vendor/`` is present and current; removes sphinx-thebe's duplicate script.
    """
    app.set_html_assets_policy("always")
    app.connect("builder-inited", _check_vendored)
    app.connect("env-updated", _drop_duplicate_inline_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    try:
        main()
    except OSError as error:  # network or disk: say what failed, without a traceback
        sys.exit(f"vendor_web_assets: {error}")
