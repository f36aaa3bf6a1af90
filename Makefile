# One command sets up and runs the main job (make demo); one sets up and runs all the tests (make test).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINK := .collections/ansible_collections/cre/certification

.PHONY: setup sim-build test unit integration sanity lint demo clean

setup: $(STAMP) $(LINK)

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

$(LINK):
	mkdir -p $(dir $(LINK))
	ln -sfn ../../.. $(LINK)

sim-build:
	bash tools/sim/build.sh

unit: setup
	$(BIN)/python -m pytest -q tests/unit

integration: setup sim-build
	$(BIN)/python -m pytest -q tests/integration

sanity: setup
	bash tests/sanity/run.sh

lint: setup
	$(BIN)/ansible-lint --profile production

test: setup sim-build
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup tests
	$(MAKE) --no-print-directory sanity lint

demo: setup sim-build
	$(BIN)/python -m tools.sim demo

clean:
	rm -rf $(VENV) .collections tests/output
