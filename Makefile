# Two commands on a fresh clone: `make run` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTRUCTION ?= put the apple in the fridge
SCENE ?= studio_kitchen

.PHONY: run test bench study lint clean

$(VENV)/.installed: setup.py constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	touch $@

run: $(VENV)/.installed
	$(VENV)/bin/conceptagent run "$(INSTRUCTION)" --scene $(SCENE) --llm offline

test: $(VENV)/.installed
	$(PY) -m pytest -q

bench: $(VENV)/.installed
	$(VENV)/bin/conceptagent bench --suite easy --suite moderate --suite hard --llm offline --out results/bench

study: $(VENV)/.installed
	$(VENV)/bin/conceptagent study config/studies/planners.yaml --out docs/benchmarks

lint: $(VENV)/.installed
	$(PY) -m pip install -q ruff mypy types-PyYAML
	$(VENV)/bin/ruff check conceptagent_ros test
	$(VENV)/bin/mypy conceptagent_ros --exclude conceptagent_ros/ros

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache results
