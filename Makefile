# The two set-up commands of the README: `make install` and `make test`.
VENV ?= .venv
PYTHON = $(VENV)/bin/python
# torch is pinned in the same install command: an unpinned torch pulls a CUDA build
TORCH = torch==2.13.0
# The GPU build (make install-gpu): the CUDA 12 build of the same torch, from PyTorch's
# wheel index (PyPI's Linux torch 2.13.0 is a CUDA 13 build, which cupy-cuda12x does not
# match), with CuPy for CUDA 12 (the cuda12x extra), in one pip command. Another CUDA 12
# build of torch: make install-gpu TORCH_CUDA=cu126
TORCH_CUDA ?= cu128
TORCH_GPU = torch==2.13.0+$(TORCH_CUDA)
TORCH_CUDA_INDEX = https://download.pytorch.org/whl/$(TORCH_CUDA)

.PHONY: install install-gpu install-gpu-cuda13 check-gpu test lint browser

install: $(PYTHON) browser
	$(PYTHON) -m pip install --upgrade pip
	$(PYTHON) -m pip install -c constraints.txt $(TORCH) -e ".[dev]"

# On a Linux machine with an NVIDIA GPU whose driver supports CUDA 12.8 (for cu128)
install-gpu: $(PYTHON) browser
	$(PYTHON) -m pip install --upgrade pip
	$(PYTHON) -m pip install -c constraints.txt --extra-index-url $(TORCH_CUDA_INDEX) \
	  $(TORCH_GPU) -e ".[dev,cuda12x]"
	$(MAKE) check-gpu

# On a Linux machine whose NVIDIA driver supports CUDA 13: PyPI's own build of the same torch
# (a CUDA 13.0 build, no extra index) with CuPy for CUDA 13 (the cuda13x extra), in one pip
# command. The stack that ran the GPU tests and benchmarks (BENCHMARKS.md, GPU) was of this kind.
install-gpu-cuda13: $(PYTHON) browser
	$(PYTHON) -m pip install --upgrade pip
	$(PYTHON) -m pip install -c constraints.txt $(TORCH) -e ".[dev,cuda13x]"
	$(MAKE) check-gpu

# What the installation has for CUDA, and whether GPU 0 works (exit 1 with the reason)
check-gpu: $(PYTHON)
	$(PYTHON) -m spacy_lisa.device --gpu-id 0

$(PYTHON):
	python3 -m venv $(VENV)

# Headless Chromium for the render test (Debian packages); skipped when already there.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; fi; }

test:
	$(PYTHON) -m pytest -n 2 --durations=15

lint:
	$(VENV)/bin/ruff check spacy_lisa tests benchmarks scripts
	$(VENV)/bin/ruff format --check spacy_lisa tests benchmarks scripts
	$(VENV)/bin/mypy
