# make reproduce   quick reproduction of every paper into the embedded MLflow store (results/quick/)
# make test        the test suite
# make reproduce-full   the papers' settings (hours; results/<paper>/, committed)
# make ui          the MLflow UI for the project's store on http://127.0.0.1:5000
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
# one server process: MLflow's default of 4 is heavy beside a sweep on 2 cores
UI_WORKERS ?= 1
UI_PORT ?= 5000

.PHONY: install reproduce reproduce-full test ui clean

install: $(INSTALLED)

$(INSTALLED): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

reproduce: install
	$(PY) -m svmrepro.reproduce --mode quick

reproduce-full: install
	$(PY) -m svmrepro.reproduce --mode full

test: install
	$(PY) -m pytest -q

ui: install
	$(VENV)/bin/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/mlflow.db \
		--default-artifact-root $(CURDIR)/mlartifacts --host 127.0.0.1 --port $(UI_PORT) --workers $(UI_WORKERS)

clean:
	rm -rf outputs multirun results/quick
