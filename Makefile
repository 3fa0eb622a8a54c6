# Every target sets itself up: a fresh machine needs only python3, git and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The dev environment's versions, pinned so ruff's and mypy's verdicts do not drift.
CONSTRAINTS := constraints-dev.txt

.PHONY: setup npm-tools demo test test-stalwart test-radian test-fast test-fast-stalwart test-fast-radian \
	test-min-radian test-adapters-lowest test-py313 bench bench-instructions bench-radian lint lint-stalwart lint-radian docs clean

# The real agent CLIs the tests run (Claude Code, Codex, ...), pinned by npm-tools/package-lock.json
# and installed once into a cache; the stamp is a copy of the lock, so an unchanged lock skips npm.
# Without node on PATH the target is left out and the tests that need a CLI skip, saying why.
NPM_TOOLS_DIR := .cache/npm-tools
NPM_TOOLS_STAMP := $(NPM_TOOLS_DIR)/installed.lock
NODE := $(shell command -v node 2>/dev/null)
NPM_TOOLS_DEP := $(if $(NODE),npm-tools,)

setup: $(STAMP)

npm-tools: $(NPM_TOOLS_STAMP)

$(NPM_TOOLS_STAMP): npm-tools/package.json npm-tools/package-lock.json
	@if cmp -s npm-tools/package-lock.json $(NPM_TOOLS_STAMP); then touch $(NPM_TOOLS_STAMP); else \
		rm -f $(NPM_TOOLS_STAMP) && mkdir -p $(NPM_TOOLS_DIR) && \
		cp npm-tools/package.json npm-tools/package-lock.json $(NPM_TOOLS_DIR)/ && \
		(cd $(NPM_TOOLS_DIR) && npm ci --no-audit --no-fund --loglevel=error) && \
		cp npm-tools/package-lock.json $(NPM_TOOLS_STAMP); fi

$(STAMP): stalwart/pyproject.toml radian/pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade 'pip>=25.1'
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) \
		-e 'stalwart[postgres,anthropic,openai,serve,pydantic-ai,langgraph,openai-agents]' -e 'radian[serve,postgres]' \
		--group stalwart/pyproject.toml:dev --group radian/pyproject.toml:dev
	touch $(STAMP)

demo: setup $(NPM_TOOLS_DEP)
	cd stalwart/examples/shop && ../../../$(PY) run.py
	@echo
	@echo "The same failed order, as a Pydantic AI agent guarded by stalwart:"
	cd stalwart/examples/pydantic_ai && ../../../$(PY) run.py
	@echo
	@echo "The same failed order, as a LangChain agent (LangGraph) guarded by stalwart:"
	cd stalwart/examples/langgraph && ../../../$(PY) run.py
	@echo
	@echo "The same failed order, as an OpenAI Agents SDK agent guarded by stalwart:"
	cd stalwart/examples/openai_agents && ../../../$(PY) run.py
	@echo
	@echo "The same desk in a browser (stalwart serve, docs: stalwart/docs/serving.md):"
	@echo "  cd stalwart/examples/shop && ../../../.venv/bin/stalwart users set agent.users u-17"
	@echo "  ../../../.venv/bin/stalwart serve agent.yaml    # then open the address it prints"
	$(PY) radian/examples/demo.py
	$(PY) radian/examples/gate_demo.py
	$(PY) radian/examples/claude_demo.py

test: test-stalwart test-radian test-adapters-lowest

# stalwart's tests in parallel too (pytest-xdist), a file to a worker: each worker starts its own
# PostgreSQL server (a free port, a data folder of its own) and has its own tmp_path; a module's
# Chromium and module fixtures stay in one process.
test-stalwart: setup $(NPM_TOOLS_DEP)
	$(PY) -m pytest stalwart/tests -n auto --dist loadfile

# radian's tests are independent (each in its own tmp_path repository): run them in parallel.
test-radian: setup $(NPM_TOOLS_DEP)
	$(PY) -m pytest radian/tests -n auto

# The unit tier alone: no git, no subprocess, no real timers.
test-fast: test-fast-stalwart test-fast-radian

# stalwart's unit tier: a unit module's PostgreSQL cases are integration tests (left out).
test-fast-stalwart: setup
	$(PY) -m pytest stalwart/tests -m "unit and not postgres"

test-fast-radian: setup
	$(PY) -m pytest radian/tests -m "unit and not postgres"

# radian's suite against the lowest versions radian/pyproject.toml declares, in a venv of its
# own: the floors are tested, not guessed. The minimums are read from the pyproject.
VENV_MIN := .venv-min
test-min-radian:
	$(PYTHON) -m venv $(VENV_MIN)
	$(VENV_MIN)/bin/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(VENV_MIN)/bin/python -m pip install --quiet $$($(PYTHON) -c 'import tomllib; \
		deps = tomllib.load(open("radian/pyproject.toml", "rb"))["project"]["dependencies"]; \
		print(" ".join(d.replace(">=", "==") for d in deps))')
	$(VENV_MIN)/bin/python -m pip install --quiet --no-deps -e radian
	# The test tools at their pinned versions; the runtime dependencies stay at their floors.
	# Not mutmut: it needs a newer click itself, so the mutation stage's tests skip here.
	grep -vE '^(pydantic|pydantic_core|click|filelock|annotated-types|typing_extensions|typing-inspection)==' \
		$(CONSTRAINTS) > $(VENV_MIN)/constraints-tools.txt
	$(VENV_MIN)/bin/python -m pip install --quiet -c $(VENV_MIN)/constraints-tools.txt \
		pytest pytest-timeout pytest-xdist hypothesis
	$(VENV_MIN)/bin/python -m pip check
	$(VENV_MIN)/bin/python -m pytest radian/tests -n auto -p no:cacheprovider

# The adapters' contract suite (SQLite) against the lowest framework versions stalwart's
# extras declare, pinned in stalwart/constraints-lowest.txt, the rest at $(CONSTRAINTS)'s pins,
# in a venv of its own built once: `make test` tests the newest (.venv) and the lowest.
VENV_LOW := .venv-lowest
LOW_STAMP := $(VENV_LOW)/.installed
LOWEST := stalwart/constraints-lowest.txt
test-adapters-lowest: $(LOW_STAMP)
	$(VENV_LOW)/bin/python -m pytest stalwart/tests/test_adapters_contract.py -x -k "not postgres" \
		-p no:cacheprovider

$(LOW_STAMP): stalwart/pyproject.toml $(LOWEST) $(CONSTRAINTS)
	rm -rf $(VENV_LOW)
	$(PYTHON) -m venv $(VENV_LOW)
	$(PYTHON) -c 'import sys; low = {l.split("==")[0].strip().lower() for l in open(sys.argv[1]) \
		if "==" in l and not l.startswith("#")}; sys.stdout.writelines(l for l in open(sys.argv[2]) \
		if l.split("==")[0].strip().lower() not in low)' $(LOWEST) $(CONSTRAINTS) \
		> $(VENV_LOW)/constraints-rest.txt
	$(VENV_LOW)/bin/python -m pip install --quiet -c $(LOWEST) -c $(VENV_LOW)/constraints-rest.txt \
		-e 'stalwart[postgres,openai,pydantic-ai,langgraph,openai-agents]' 'pydantic-ai-slim[openai]' \
		langchain-openai pytest pytest-timeout hypothesis
	$(VENV_LOW)/bin/python -m pip check
	touch $(LOW_STAMP)

# Both suites on Python 3.13, in a venv of its own (.venv-py313) installed as `setup` installs
# .venv; the pytest configs already make a ResourceWarning (an unclosed file, socket or sqlite3
# connection) an error. PYTHON313 names the interpreter, e.g. ~/.pyenv/versions/3.13.0/bin/python.
PYTHON313 ?= python3.13
VENV_313 := .venv-py313
test-py313: $(NPM_TOOLS_DEP)
	$(PYTHON313) -m venv $(VENV_313)
	$(VENV_313)/bin/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(VENV_313)/bin/python -m pip install --quiet -c $(CONSTRAINTS) \
		-e 'stalwart[postgres,anthropic,openai,serve,pydantic-ai,langgraph,openai-agents]' -e radian \
		--group stalwart/pyproject.toml:dev --group radian/pyproject.toml:dev
	$(VENV_313)/bin/python -m pytest stalwart/tests -n auto --dist loadfile -p no:cacheprovider
	$(VENV_313)/bin/python -m pytest radian/tests -n auto -p no:cacheprovider

bench: setup
	$(PY) stalwart/benchmarks/run.py
	$(PY) stalwart/benchmarks/serve_load.py
	$(PY) stalwart/benchmarks/pydantic_ai_guard.py
	$(PY) stalwart/benchmarks/langgraph_guard.py
	$(PY) stalwart/benchmarks/openai_agents_guard.py

# What one order's calls (chat and three confirms) cost in instructions, counted by callgrind
# on an in-memory record: the failed and the happy order (needs valgrind; a few minutes).
bench-instructions: setup
	$(PY) stalwart/benchmarks/instructions.py

# radian arc at 10,000 tasks: plan load, an idle pass of the loop, show (figures, no test).
bench-radian: setup
	$(PY) radian/benchmarks/bench_arc.py

lint: lint-stalwart lint-radian

lint-stalwart: setup
	$(VENV)/bin/ruff check stalwart
	$(VENV)/bin/ruff format --check stalwart
	cd stalwart && ../$(VENV)/bin/mypy src tests benchmarks
	# the example's run.py would clash with benchmarks/run.py as module "run": checked alone
	cd stalwart/examples/shop && ../../../$(VENV)/bin/mypy --config-file ../../pyproject.toml run.py shop
	cd stalwart/examples/pydantic_ai && ../../../$(VENV)/bin/mypy --config-file ../../pyproject.toml run.py
	cd stalwart/examples/langgraph && ../../../$(VENV)/bin/mypy --config-file ../../pyproject.toml run.py
	cd stalwart/examples/openai_agents && ../../../$(VENV)/bin/mypy --config-file ../../pyproject.toml run.py

lint-radian: setup
	$(VENV)/bin/ruff check radian
	$(VENV)/bin/ruff format --check radian
	cd radian && ../$(VENV)/bin/mypy src tests

DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP) docs/requirements.txt
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -r docs/requirements.txt
	touch $(DOCS_STAMP)

# The docs site (mkdocs, material theme, the API reference by mkdocstrings) into site/;
# --strict makes a broken link or a missing page an error.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) $(VENV_MIN) $(VENV_313) site
