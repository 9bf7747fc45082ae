# Two commands for a fresh machine: `make serve` and `make test` (see README.md).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The CPU build of torch, pinned: an unpinned torch pulls a multi-GB CUDA build.
TORCH  ?= torch==2.13.0

.PHONY: setup serve test lint clean chromium

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)"
	$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	# GLiNER's code path is tested with a tiny model built locally (tests/facts): its
	# package pins transformers<5.17 though it runs on the newer one installed above, so
	# it goes in without its dependencies rather than downgrade the embeddings stack.
	$(BIN)/python -m pip install --quiet --no-deps "gliner==0.2.29"
	touch $@

setup: $(STAMP)

serve: setup
	$(BIN)/aide-memoire serve

# The web page's browser tests drive Debian's chromium (tests/web); install it if missing.
chromium:
	test -x /usr/bin/chromium || ! command -v apt-get >/dev/null || \
		(apt-get update && apt-get install -y chromium)

test: setup chromium
	npm install --prefix .tools --no-audit --no-fund @anthropic-ai/claude-code@2.1.197
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check server tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .tools
