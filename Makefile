# Shuffle Privacy: two commands, `make book` and `make test` (see README.md).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
SETUP_DONE := $(VENV)/.setup-done
# The website's JavaScript (MathJax, RequireJS, the widget manager), pinned in the script
VENDOR := _vendor
VENDOR_DONE := $(VENDOR)/.pins
KERNEL := shuffle-privacy
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
BUILD_BOOK := $(BIN)/jupyter-book build . -n -W --keep-going

.PHONY: help setup book student coursepack pdf test lab bench fullscale clean clean-all

# The website's downloads, linked from each page's download menu (tools/page_downloads.py):
# the chapters as portable notebooks (_portable/) and as PDF (_pdf/, with the whole book).
# $(1): the built site; $(2): its edition.
define site_downloads
	rm -rf _build/portable $(1)/_portable
	$(BIN)/python tools/portable_notebooks.py --base-url ../ --out _build/portable
	cp -R _build/portable/$(2) $(1)/_portable
	$(BIN)/python tools/book_pdf.py --site $(1) --edition $(2)
endef

help:
	@echo "make book   build the website (_build/html/index.html), every notebook executed"
	@echo "make student the student edition (no solutions): _build/student/_build/html, notebooks in _build/student/notebooks"
	@echo "make pdf    the book as PDF, whole and per chapter, both editions: _build/pdf/{instructor,student}/"
	@echo "make coursepack the course pack: _build/coursepack/ and .zip (student + instructor notebooks, student site, wheel, pinned requirements, READMEs)"
	@echo "make test   ruff, pytest, strict book build, per-notebook time budget, every page in headless Chromium, the PDF read back, the portable notebooks rendered by nbconvert and run in a fresh venv, one chapter per part run in JupyterLab"
	@echo "make lab    JupyterLab; chapters (.md) open as notebooks, rendered as on the website"
	@echo "make bench  run benchmarks/ and print time ratios"
	@echo "make fullscale run every chapter at the paper's scale (about 35 min); FULLSCALE_ARGS=\"--quick\" for a fast check"
	@echo "make clean  remove build outputs (make clean-all also removes .venv and _vendor)"

setup: $(SETUP_DONE) $(VENDOR_DONE)

# Idempotent: reruns only when the pins or the package metadata change.
$(SETUP_DONE): requirements.txt requirements.lock pyproject.toml tools/jupyterlab/install.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -c requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (Shuffle Privacy)" > /dev/null
	@# JupyterLab renders the chapters as the website does: macros, glued numbers, folded solutions
	$(BIN)/python tools/jupyterlab/install.py
	mkdir -p $(LAB_SETTINGS)
	echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' > $(LAB_SETTINGS)/overrides.json
	# Build matplotlib's font cache here: inside a notebook its stderr message would fail the strict build.
	MPLBACKEND=Agg $(BIN)/python -c "import matplotlib.pyplot"
	touch $(SETUP_DONE)

# Idempotent: the script downloads (checksummed) only when its pins differ from _vendor/.pins.
$(VENDOR_DONE): tools/vendor_web_assets.py
	$(PYTHON) tools/vendor_web_assets.py
	touch $(VENDOR_DONE)

book: setup
	$(BUILD_BOOK)
	$(call site_downloads,_build/html,instructor)
	@echo "Book built: $(CURDIR)/_build/html/index.html"

# The student edition: sources copied without solutions, built on their own, then checked
# against the instructor edition (which `book` builds first).
student: book
	$(BIN)/python tools/student_edition.py
	@# _config.yml names _vendor/ and its local extensions in tools/ relative to the sources
	mkdir -p _build/student/source/tools
	cp tools/vendor_web_assets.py tools/codeautolink_sections.py tools/reading_path.py \
	  tools/page_downloads.py tools/book_pdf.py _build/student/source/tools/
	cp -R tools/site_accessibility _build/student/source/tools/
	cp -R $(VENDOR) _build/student/source/
	$(BIN)/jupyter-book build _build/student/source -n -W --keep-going --path-output _build/student
	$(call site_downloads,_build/student/_build/html,student)
	$(BIN)/python -m pytest -m student
	@echo "Student edition: $(CURDIR)/_build/student/_build/html/index.html (notebooks: _build/student/notebooks)"

# The course pack: portable notebooks (links into the pack's student website unless
# COURSEPACK_BASE_URL names a hosted copy), the wheel built offline from a clean copy of the
# sources (as tests/test_wheel.py does), then tools/coursepack.py assembles, checks that no
# solution reaches the student half, and zips.
COURSEPACK_BASE_URL ?= ../../student/website/
coursepack: student
	rm -rf _build/coursepack-portable
	$(BIN)/python tools/portable_notebooks.py --base-url $(COURSEPACK_BASE_URL) --out _build/coursepack-portable
	rm -rf _build/wheel _build/wheel-source
	mkdir -p _build/wheel-source
	cp pyproject.toml _build/wheel-source/
	cp -R shuffle_lib _build/wheel-source/
	find _build/wheel-source -name __pycache__ -type d -prune -exec rm -rf {} +
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
	  --no-index --no-cache-dir --wheel-dir _build/wheel _build/wheel-source
	$(BIN)/python tools/coursepack.py --portable _build/coursepack-portable --wheel-dir _build/wheel

# Both editions' PDFs (make student prints the student one and checks it has no solution).
pdf: student
	rm -rf _build/pdf
	mkdir -p _build/pdf
	cp -R _build/html/_pdf _build/pdf/instructor
	cp -R _build/student/_build/html/_pdf _build/pdf/student
	@echo "PDF: $(CURDIR)/_build/pdf/{instructor,student}/book.pdf and one file per chapter"

test: setup
	$(BIN)/ruff check .
	@# chapter code too (prose becomes comments, so no line-length rule; a bare `fig` displays it)
	grep -rl --include='*.md' '^kernelspec:' book | sort | while read -r chapter; do \
	  $(BIN)/jupytext --quiet --to py:percent -o - "$$chapter" \
	  | $(BIN)/ruff check --quiet --extend-ignore E501,B018 --stdin-filename "$$chapter.py" - \
	  || exit 1; \
	done
	$(BIN)/python -m pytest -m "not book and not student and not lab"
	$(BUILD_BOOK)
	$(call site_downloads,_build/html,instructor)
	@# -rs: a skipped check (the browser tests without Chromium) says why in the summary
	$(BIN)/python -m pytest -m "book or lab" -rs

lab: $(SETUP_DONE)
	$(BIN)/jupyter lab --notebook-dir=. $(if $(filter 0,$(shell id -u)),--allow-root)

bench: $(SETUP_DONE)
	$(BIN)/python benchmarks/run.py

# The chapters' skip-execution cells (the papers' parameters), each chapter run to its end;
# the report (times, glued values at both scales) goes to _build/fullscale/report.json.
FULLSCALE_ARGS ?=
fullscale: setup
	nice $(BIN)/python tools/fullscale.py $(FULLSCALE_ARGS)

clean:
	rm -rf _build .pytest_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

clean-all: clean
	rm -rf $(VENV) $(VENDOR)
