# The two set-up commands of the README: `make install` and `make test`.
VENV ?= .venv
# the interpreter the virtualenv is made from: any CPython 3.11 to 3.14
# (make install BASE_PYTHON=python3.13)
BASE_PYTHON ?= python3
PYTHON = $(VENV)/bin/python
# torch is pinned in every install command: an unpinned torch pulls another build
TORCH = torch==2.13.0
# make install takes torch's CPU build from PyTorch's CPU wheel index (on Linux PyPI's own
# torch is a CUDA 13 build with about 3 GB of nvidia packages); `make install TORCH_INDEX=`
# takes PyPI's build instead. torch comes first, alone, from that index (PyTorch's advice:
# the index serves torch and its own dependencies), then everything else from PyPI with the
# same torch pinned, which pip keeps.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
# The GPU build (make install-gpu): the CUDA 12 build of the same torch, from PyTorch's
# wheel index (PyPI's Linux torch 2.13.0 is a CUDA 13 build, which cupy-cuda12x does not
# match), with CuPy for CUDA 12 (the cuda12x extra), in one pip command. Another CUDA 12
# build of torch: make install-gpu TORCH_CUDA=cu126
TORCH_CUDA ?= cu128
TORCH_GPU = torch==2.13.0+$(TORCH_CUDA)
TORCH_CUDA_INDEX = https://download.pytorch.org/whl/$(TORCH_CUDA)
# make test-python313: the whole suite on CPython 3.13, built from ../shared/python
PY313 ?= $(HOME)/.cache/py313/bin/python3.13

.PHONY: install install-gpu install-gpu-cuda13 check-gpu test test-python313 \
	test-transformers5 lint browser

install: $(PYTHON) browser
	$(PYTHON) -m pip install --upgrade pip
	$(PYTHON) -m pip install $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX)) $(TORCH)
	$(PYTHON) -m pip install $(TORCH) -e ".[dev]"

# On a Linux machine with an NVIDIA GPU whose driver supports CUDA 12.8 (for cu128)
install-gpu: $(PYTHON) browser
	$(PYTHON) -m pip install --upgrade pip
	$(PYTHON) -m pip install --extra-index-url $(TORCH_CUDA_INDEX) \
	  $(TORCH_GPU) -e ".[dev,cuda12x]"
	$(MAKE) check-gpu

# On a Linux machine whose NVIDIA driver supports CUDA 13: PyPI's own build of the same torch
# (a CUDA 13.0 build, no extra index) with CuPy for CUDA 13 (the cuda13x extra), in one pip
# command. The stack that ran the GPU tests and benchmarks (BENCHMARKS.md, GPU) was of this kind.
install-gpu-cuda13: $(PYTHON) browser
	$(PYTHON) -m pip install --upgrade pip
	$(PYTHON) -m pip install $(TORCH) -e ".[dev,cuda13x]"
	$(MAKE) check-gpu

# What the installation has for CUDA, and whether GPU 0 works (exit 1 with the reason)
check-gpu: $(PYTHON)
	$(PYTHON) -m spacy_lisa.device --gpu-id 0

$(PYTHON):
	$(BASE_PYTHON) -m venv $(VENV)

# Headless Chromium for the render test (Debian packages); skipped when already there.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; fi; }

test:
	$(PYTHON) -m pytest -n 2 --dist worksteal --durations=15

# The README's install and the whole suite in .venv-py313 on CPython 3.13 (built first
# into ~/.cache/py313 from ../shared/python when missing: a few minutes on 2 cores)
test-python313:
	test -x $(PY313) || bash ../shared/python/build.sh
	$(MAKE) install test VENV=.venv-py313 BASE_PYTHON=$(PY313)

# The encoder tests and the project smoke run beside transformers 5, in .venv-transformers5
test-transformers5:
	TORCH_INDEX=$(TORCH_INDEX) PYTHON=$(BASE_PYTHON) bash scripts/test_transformers5.sh

lint:
	$(VENV)/bin/ruff check spacy_lisa tests benchmarks scripts
	$(VENV)/bin/ruff format --check spacy_lisa tests benchmarks scripts
	$(VENV)/bin/mypy
