# Shuffle Privacy: two commands, `make book` and `make test` (see README.md).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
SETUP_DONE := $(VENV)/.setup-done
KERNEL := shuffle-privacy
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
BUILD_BOOK := $(BIN)/jupyter-book build . -n -W --keep-going

.PHONY: help setup book student test lab bench clean clean-all

help:
	@echo "make book   build the website (_build/html/index.html), every notebook executed"
	@echo "make student the student edition (no solutions): _build/student/_build/html, notebooks in _build/student/notebooks"
	@echo "make test   ruff, pytest, strict book build, per-notebook time budget"
	@echo "make lab    JupyterLab; chapters (.md) open as notebooks"
	@echo "make bench  run benchmarks/ and print time ratios"
	@echo "make clean  remove build outputs (make clean-all also removes .venv)"

setup: $(SETUP_DONE)

# Idempotent: reruns only when the pins or the package metadata change.
$(SETUP_DONE): requirements.txt requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -c requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (Shuffle Privacy)" > /dev/null
	mkdir -p $(LAB_SETTINGS)
	echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' > $(LAB_SETTINGS)/overrides.json
	# Build matplotlib's font cache here: inside a notebook its stderr message would fail the strict build.
	MPLBACKEND=Agg $(BIN)/python -c "import matplotlib.pyplot"
	touch $(SETUP_DONE)

book: $(SETUP_DONE)
	$(BUILD_BOOK)
	@echo "Book built: $(CURDIR)/_build/html/index.html"

# The student edition: sources copied without solutions, built on their own, then checked
# against the instructor edition (which `book` builds first).
student: book
	$(BIN)/python tools/student_edition.py
	$(BIN)/jupyter-book build _build/student/source -n -W --keep-going --path-output _build/student
	$(BIN)/python -m pytest -m student
	@echo "Student edition: $(CURDIR)/_build/student/_build/html/index.html (notebooks: _build/student/notebooks)"

test: $(SETUP_DONE)
	$(BIN)/ruff check .
	@# chapter code too (prose becomes comments, so no line-length rule; a bare `fig` displays it)
	grep -rl --include='*.md' '^kernelspec:' book | sort | while read -r chapter; do \
	  $(BIN)/jupytext --quiet --to py:percent -o - "$$chapter" \
	  | $(BIN)/ruff check --quiet --extend-ignore E501,B018 --stdin-filename "$$chapter.py" - \
	  || exit 1; \
	done
	$(BIN)/python -m pytest -m "not book and not student"
	$(BUILD_BOOK)
	$(BIN)/python -m pytest -m book

lab: $(SETUP_DONE)
	$(BIN)/jupyter lab --notebook-dir=. $(if $(filter 0,$(shell id -u)),--allow-root)

bench: $(SETUP_DONE)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf _build .pytest_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

clean-all: clean
	rm -rf $(VENV)
