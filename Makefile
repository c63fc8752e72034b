# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# CPU torch first: otherwise sentence-transformers pulls several GB of CUDA packages.
TORCH  := torch==2.13.0

.PHONY: demo test lint install dev clean bench

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

# the whole check: style and types first (seconds), then the suite
test: lint
	$(BIN)/python -m pytest -q

lint: dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

bench: dev
	$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) demo_workspace .pytest_cache .mypy_cache
