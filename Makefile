# Two commands do all the set-up on a fresh machine that has python3 and make:
#   make run   - create .venv if missing, install nnrpsim, run the main job
#   make test  - create .venv if missing, install with the test extra, lint and run the whole suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check --quiet

.PHONY: run test lint format bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PIP) install -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PIP) install -e '.[test,dask,notebooks]'
	touch $@

run: $(VENV)/.installed
	$(PY) -m nnrpsim run scenarios/quickstart.yaml --resume

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check nnrpsim tests benchmarks
	$(VENV)/bin/ruff format --check nnrpsim tests benchmarks

format: $(VENV)/.installed-test
	$(VENV)/bin/ruff format nnrpsim tests benchmarks
	$(VENV)/bin/ruff check --fix nnrpsim tests benchmarks

# pytest exit 5 means "no tests collected": that is a failure here, said out loud.
test: lint
	@$(PY) -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

bench: $(VENV)/.installed-test
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache
