# make reproduce   quick reproduction of every paper into the embedded MLflow store (results/quick/)
# make test        the test suite
# make reproduce-full   the papers' settings (hours; results/<paper>/, committed)
# make test-matrix the test suite once per scikit-learn minor the package allows (lowest and highest)
# make ui          the MLflow UI for the project's store on http://127.0.0.1:5000
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
# one server process: MLflow's default of 4 is heavy beside a sweep on 2 cores
UI_WORKERS ?= 1
UI_PORT ?= 5000

.PHONY: install reproduce reproduce-full test test-matrix ui clean

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

# two pytest workers: most of the suite waits on subprocesses (sweeps, signals, stores), so 2 cores run it in
# about two thirds of the serial time
PYTEST_WORKERS ?= 2

test: install
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal

# scikit-learn minors of pyproject.toml's range, each in a venv of its own (.venv-sklearn-<minor>)
SKLEARN_MINORS ?= 1.8 1.9

test-matrix:
	set -e; for minor in $(SKLEARN_MINORS); do \
		venv=.venv-sklearn-$$minor; \
		test -x $$venv/bin/python || $(PYTHON) -m venv $$venv; \
		$$venv/bin/python -m pip install --quiet --upgrade pip; \
		$$venv/bin/python -m pip install --quiet -e ".[test]" "scikit-learn==$$minor.*"; \
		echo "== scikit-learn $$($$venv/bin/python -c 'import sklearn; print(sklearn.__version__)')"; \
		$$venv/bin/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal -p no:cacheprovider; \
	done

ui: install
	$(VENV)/bin/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/mlflow.db \
		--default-artifact-root $(CURDIR)/mlartifacts --host 127.0.0.1 --port $(UI_PORT) --workers $(UI_WORKERS)

clean:
	rm -rf outputs multirun results/quick .venv-sklearn-*
