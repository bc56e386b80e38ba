# mlckit — developer entry points.
#
#   make lab    set everything up (first time) and start JupyterLab on notebooks/
#   make test   set everything up (first time) and run every test (tests/ + notebooks)
#   make lint   ruff over the package and the tests; the import layers (lint-imports)
#   make docs   build the book (guide, rendered notebooks, API reference) into docs/_build/html
#   make docs-serve   serve the built book on http://127.0.0.1:$(DOCS_PORT)/
#   make clean  remove the virtual environment and caches
#
# The virtual environment lives in .venv/ and is rebuilt whenever pyproject.toml changes.

PYTHON  ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
# notebooks are executed and compared with their stored outputs (nbval); addresses and
# timings are masked by .ci/nbval_sanitize.cfg
NBVAL   ?= --nbval --nbval-current-env --nbval-sanitize-with .ci/nbval_sanitize.cfg
NOTEBOOKS := $(shell find notebooks -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' 2>/dev/null)
PYTEST_ARGS ?=
LAB_ARGS ?=
# JupyterLab refuses root unless told (containers run as root), and without a display it
# should print its URL instead of trying to open a browser.
LAB_FLAGS := $(if $(filter 0,$(shell id -u)),--allow-root) \
             $(if $(DISPLAY)$(WAYLAND_DISPLAY),,--no-browser)

.PHONY: all venv .venv lab test lint sysdeps clean docs docs-serve

all: test

# `make .venv` / `make venv`: (re)create the environment only when it is out of date.
venv .venv: $(STAMP)

# mlckit/__init__.py is a prerequisite when it exists, so an install made before the package
# had one (a namespace-package editable install) is redone once it appears.
$(STAMP): pyproject.toml $(wildcard mlckit/__init__.py)
	@$(PYTHON) -m venv --help >/dev/null 2>&1 || { \
	  echo "error: '$(PYTHON) -m venv' is unavailable; on Debian/Ubuntu: sudo apt-get install python3-venv" >&2; exit 1; }
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --upgrade pip
	$(VPY) -m pip install -e '.[dev]'
	touch $@

# Debian packages: graphviz (`dot` draws graph views), chromium (the browser tests drive it)
# and dataset-fashion-mnist (the end-to-end chapter's data). Best effort: installed when we
# are root or have sudo.
SYSPKGS := $(if $(shell command -v dot),,graphviz) \
           $(if $(shell command -v chromium),,chromium) \
           $(if $(shell dpkg -s dataset-fashion-mnist 2>/dev/null | grep -q "ok installed" && echo y),,dataset-fashion-mnist)
sysdeps:
	@pkgs="$(strip $(SYSPKGS))"; if [ -z "$$pkgs" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  (apt-get update && apt-get install -y $$pkgs) || echo "warning: could not install $$pkgs" >&2; \
	elif command -v sudo >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	  (sudo apt-get update && sudo apt-get install -y $$pkgs) || echo "warning: could not install $$pkgs" >&2; \
	else \
	  echo "warning: please install the Debian packages: $$pkgs" >&2; \
	fi

lab: $(STAMP) sysdeps
	$(VENV)/bin/jupyter lab notebooks/ $(strip $(LAB_FLAGS)) $(LAB_ARGS)

test: $(STAMP) sysdeps
	@# build matplotlib's font cache first: its one-time notice would differ from stored outputs
	@$(VPY) -c "import matplotlib.pyplot" >/dev/null 2>&1 || true
	$(VPY) -m pytest tests $(if $(NOTEBOOKS),notebooks $(NBVAL)) $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check mlckit tests
	$(VENV)/bin/lint-imports --no-cache  # the contracts in .importlinter

# The book: Sphinx over docs/ and notebooks/ (the notebooks' stored outputs, never re-run);
# every warning is an error. The dev extra includes the docs extra.
DOCS_PORT ?= 8000
SPHINXOPTS ?= -W --keep-going -q -j 2
docs: $(STAMP)
	$(VPY) -m sphinx -b html -c docs $(SPHINXOPTS) . docs/_build/html
	@echo "the book: docs/_build/html/index.html (make docs-serve to browse it)"

docs-serve: docs
	$(VPY) -m http.server $(DOCS_PORT) --bind 127.0.0.1 --directory docs/_build/html

clean:
	rm -rf $(VENV) build dist docs/_build docs/api *.egg-info .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -prune -not -path './.git/*' -exec rm -rf {} +
