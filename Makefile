# The two set-up commands of the README: `make install` and `make test`.
VENV ?= .venv
PYTHON = $(VENV)/bin/python
# torch is pinned in the same install command: an unpinned torch pulls a CUDA build
TORCH = torch==2.13.0

.PHONY: install test lint browser

install: $(PYTHON) browser
	$(PYTHON) -m pip install --upgrade pip
	$(PYTHON) -m pip install -c constraints.txt $(TORCH) -e ".[dev]"

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
