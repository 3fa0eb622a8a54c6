# Every target sets itself up: a fresh machine needs only python3, git and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The dev environment's versions, pinned so ruff's and mypy's verdicts do not drift.
CONSTRAINTS := constraints-dev.txt

.PHONY: setup demo test test-stalwart test-radian bench lint lint-stalwart lint-radian docs clean

setup: $(STAMP)

$(STAMP): stalwart/pyproject.toml radian/pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade 'pip>=25.1'
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) \
		-e 'stalwart[postgres,anthropic,openai]' -e radian \
		--group stalwart/pyproject.toml:dev --group radian/pyproject.toml:dev
	touch $(STAMP)

demo: setup
	cd stalwart/examples/shop && ../../../$(PY) run.py
	$(PY) radian/examples/demo.py
	$(PY) radian/examples/gate_demo.py

test: test-stalwart test-radian

test-stalwart: setup
	$(PY) -m pytest stalwart/tests

test-radian: setup
	$(PY) -m pytest radian/tests

bench: setup
	$(PY) stalwart/benchmarks/run.py

lint: lint-stalwart lint-radian

lint-stalwart: setup
	$(VENV)/bin/ruff check stalwart
	$(VENV)/bin/ruff format --check stalwart

lint-radian: setup
	$(VENV)/bin/ruff check radian
	$(VENV)/bin/ruff format --check radian

DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP) docs/requirements.txt
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -r docs/requirements.txt
	touch $(DOCS_STAMP)

# The docs site (mkdocs, material theme, the API reference by mkdocstrings) into site/;
# --strict makes a broken link or a missing page an error.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) site
