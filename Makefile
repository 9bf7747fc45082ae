# Two commands for a fresh machine: `make serve` and `make test` (see README.md).
# Recipe lines start with @ so that `make serve` shows the server's own words, not make's.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The CPU build of torch, pinned: an unpinned torch pulls a multi-GB CUDA build.
TORCH  ?= torch==2.13.0
# A second, small environment with `pip install .` and no extras: the keyword-only
# install docs/install.md describes. tests/test_keyword_install.py runs the CLI and the
# MCP server in it (and fails if it is missing). Rebuilt only when the dependencies change.
KW_VENV  := .venv-keyword
KW_STAMP := $(KW_VENV)/.installed

.PHONY: setup keyword-env chromium clients bundle serve test test-fast lint clean

# GLiNER's code path is tested with a tiny model built locally (tests/facts): its package
# pins transformers<5.17 though it runs on the newer one installed with torch, so it goes
# in without its dependencies rather than downgrade the embeddings stack.
$(STAMP): pyproject.toml Makefile
	@echo "make: installing into $(VENV) (first time only)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet "$(TORCH)"
	@$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	@$(BIN)/python -m pip install --quiet --no-deps "gliner==0.2.29"
	@touch $@

setup: $(STAMP)

# The package is installed as a user would install it (a wheel of this tree, no extras);
# the test then runs this tree's code in it (PYTHONPATH), so edits need no reinstall.
$(KW_STAMP): pyproject.toml Makefile
	@echo "make: building the keyword-only environment $(KW_VENV) (first time only)"
	@rm -rf $(KW_VENV)
	@$(PYTHON) -m venv $(KW_VENV)
	@$(KW_VENV)/bin/python -m pip install --quiet --upgrade pip
	@$(KW_VENV)/bin/python -m pip install --quiet .
	@rm -rf build
	@touch $@

keyword-env: $(KW_STAMP)

serve: setup
	@$(BIN)/aide-memoire serve

# The web page's browser tests drive Debian's chromium (tests/web); installed if missing.
chromium:
	@test -x /usr/bin/chromium || ! command -v apt-get >/dev/null || \
		(apt-get update -qq && apt-get install -y -qq chromium)

# Real MCP clients, pinned, for the tests that run them (tests/mcp, tests/plugin, the
# .mcpb bundle): npm skips what is already installed at these versions.
CLIENTS := @anthropic-ai/claude-code@2.1.197 @openai/codex@0.169.0 \
	@google/gemini-cli@0.61.0 opencode-ai@1.18.33 @anthropic-ai/mcpb@2.1.2

clients:
	@npm install --prefix .tools --no-audit --no-fund --silent $(CLIENTS)

# Lint first: CI runs `make test` (.ci/run), and ruff and mypy strict (package, tests and
# bench) hold only while something runs them. The tests run on TEST_WORKERS pytest-xdist
# workers, more than the cores: many tests wait on subprocesses, servers and clients.
# Whole files go to one worker (loadfile), so a module's fixtures (stores, servers, a
# browser, a Claude Code world) are built once and never shared between two workers.
TEST_WORKERS ?= 3
test: setup keyword-env chromium clients lint
	@$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The fast tier: no real clients or servers, no model-backed stores (see tests/conftest.py).
test-fast: setup
	@$(BIN)/python -m pytest -m "not slow" -q

# The MCP Bundle for Claude Desktop (docs/clients.md): staged in build/mcpb from this
# tree (server/aide_memoire/mcp/bundle.py), validated and packed by the pinned mcpb.
MCPB := .tools/node_modules/.bin/mcpb
bundle: setup clients
	@PYTHONPATH=server $(BIN)/python -m aide_memoire.mcp.bundle build/mcpb >/dev/null
	@$(MCPB) validate build/mcpb/manifest.json
	@mkdir -p dist
	@$(MCPB) pack build/mcpb dist/aide-memoire.mcpb

lint: setup
	@$(BIN)/ruff check server tests bench
	@$(BIN)/mypy

clean:
	@rm -rf $(VENV) $(KW_VENV) .tools
