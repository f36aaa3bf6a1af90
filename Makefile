# One command sets up and runs the main job (make demo); one sets up and runs all the tests (make test).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINK := .collections/ansible_collections/cre/certification

.PHONY: setup chromium sim-build test unit integration molecule sanity lint docs-lint typecheck demo bench clean

setup: $(STAMP) $(LINK) chromium

# Debian's chromium opens the HTML reports in the browser tests (headless); installed once, quietly.
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

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
	$(BIN)/python -m pytest -q -n $${CRE_TEST_WORKERS:-3} --dist loadfile tests/integration

molecule: setup sim-build
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/molecule test -s certify

sanity: setup
	bash tests/sanity/run.sh

lint: setup
	$(BIN)/ansible-lint --profile production
	$(BIN)/ruff check .

docs-lint: setup
	bash tests/docs_lint.sh

# mypy reads the collection through its ansible_collections path, as Ansible imports it.
typecheck: setup
	cd .collections && ../$(BIN)/mypy -p ansible_collections.cre.certification.plugins

# Two lanes side by side (tests/suite.py): the cluster tests on parallel workers; beside them mypy, the unit
# tests, sanity, lint, the docs lint and molecule. Ends with each stage's time, the slowest tests and the total.
test: setup sim-build
	$(BIN)/python tests/suite.py

demo: setup sim-build
	$(BIN)/python -m tools.sim demo

bench: setup sim-build
	$(BIN)/python bench/plan.py
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .collections tests/output
