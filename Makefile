# Every target sets itself up: a fresh machine needs only python3, git and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench lint clean

setup: $(STAMP)

$(STAMP): stalwart/pyproject.toml radian/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e 'stalwart[dev]' -e 'radian[dev]'
	touch $(STAMP)

demo: setup
	cd stalwart/examples/shop && ../../../$(PY) run.py
	$(PY) radian/examples/demo.py
	$(PY) radian/examples/gate_demo.py

test: setup
	$(PY) -m pytest stalwart/tests
	$(PY) -m pytest radian/tests

bench: setup
	$(PY) stalwart/benchmarks/run.py

lint: setup
	$(VENV)/bin/ruff check stalwart radian
	$(VENV)/bin/ruff format --check stalwart radian

clean:
	rm -rf $(VENV)
