# Two commands do all the set-up on a fresh machine that has python3, make and a C compiler:
#   make run   - create .venv if missing, install nnrpsim, run the main job
#   make test  - create .venv if missing, install with the test extra, lint and run the whole suite
# Installing compiles the model's event loop (setup.py); a change to the model's sources
# installs again, so what runs is never an older build. `make build` does only that.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check --quiet

.PHONY: run test lint format bench build clean

# what the compiled modules are built from: setup.py names the modules it compiles; every model
# and engine source is an over-approximation that costs at most a needless build of a minute
BUILD_INPUTS := pyproject.toml setup.py $(wildcard nnrpsim/model/*.py nnrpsim/engine/*.py \
	nnrpsim/engine/replay/*.py)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BUILD_INPUTS) | $(PY)
	$(PIP) install -e .
	touch $@

$(VENV)/.installed-test: $(BUILD_INPUTS) | $(PY)
	$(PIP) install -e '.[test,dask,notebooks]'
	touch $@

build: $(VENV)/.installed

run: $(VENV)/.installed
	$(PY) -m nnrpsim run scenarios/quickstart.yaml --resume

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check nnrpsim tests benchmarks setup.py
	$(VENV)/bin/ruff format --check nnrpsim tests benchmarks setup.py

format: $(VENV)/.installed-test
	$(VENV)/bin/ruff format nnrpsim tests benchmarks setup.py
	$(VENV)/bin/ruff check --fix nnrpsim tests benchmarks setup.py

# pytest exit 5 means "no tests collected": that is a failure here, said out loud. The suite
# runs on every core (pytest-xdist; workers steal each other's queued tests, so a long test
# does not hold up the end): about half the time on 2 cores.
test: lint
	@$(PY) -m pytest -n auto --dist worksteal; status=$$?; \
	if [ $$status -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

bench: $(VENV)/.installed-test
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache build nnrpsim/compiled_sources.json
	find nnrpsim -name '*.so' -delete
