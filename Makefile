# make reproduce   quick reproduction of every paper into the embedded MLflow store (results/quick/)
# make test        the test suite
# make reproduce-full   the papers' settings (hours; results/<paper>/, committed)
# make test-bounds the test suite at the lowest and at the highest versions pyproject.toml allows (every direct
#                  dependency: scikit-learn, mlflow, hydra-core, numpy...), each in a venv of its own; for CI,
#                  not part of make test (about 35 minutes on 2 cores: a minute to install each, then the suite)
# make time-readme times README's first two commands here (ONLY=quick or ONLY=tests: one of them) into
#                  results/bench/readme_commands.csv and README's block of their times; on an idle machine
# make ui          the MLflow UI for the project's store on http://127.0.0.1:5000 (it prints each experiment's link)
# make tutorial-results  the tutorial's study reproduced (quick mode) into docs/tutorial/results/, committed: the
#                  tutorial shows its figure; FROM_CSV=1 redraws the pages from the committed runs CSV (after a change
#                  in the package's report code), no run made
# make docs        the documentation site into build/docs/ (open build/docs/index.html); a warning, a broken
#                  link among them, fails it
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
DOCS_INSTALLED := $(VENV)/.docs-installed
# one server process: MLflow's default of 4 is heavy beside a sweep on 2 cores
UI_WORKERS ?= 1
UI_PORT ?= 5000

.PHONY: install reproduce reproduce-full test test-bounds time-readme ui tutorial-results docs clean

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

# two pytest workers, one per core: the suite keeps both busy (its CPU time is about 1.8x its wall time on 2 cores).
# Compiled modules are written for the run even where PYTHONDONTWRITEBYTECODE is set: the suite starts hundreds of
# Python processes (command lines, sweeps, their workers), and each would compile svmrepro's modules again
PYTEST_WORKERS ?= 2
KEEP_BYTECODE = PYTHONDONTWRITEBYTECODE=

test: install
	$(KEEP_BYTECODE) $(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal

# The bounds of pyproject.toml's ranges, found by uv's resolver rather than typed here: "lowest-direct" takes the
# lowest version every direct dependency allows (their own dependencies as new as those allow), "highest" the newest.
# Each venv (.venv-bounds-low, .venv-bounds-high) is synced to its resolution, written to requirements.txt in it.
# Every bound is tested even when one fails; PYTEST_ARGS narrows the suite (tests/test_config.py, say).
BOUNDS ?= low high
PYTEST_ARGS ?=
UV := $(VENV)/bin/uv

$(UV): $(INSTALLED)
	$(PY) -m pip install --quiet "uv>=0.9,<1"

test-bounds: $(UV)
	status=0; for bound in $(BOUNDS); do \
		case $$bound in low) resolution=lowest-direct;; high) resolution=highest;; \
			*) echo "BOUNDS: low or high, not $$bound" >&2; exit 2;; esac; \
		venv=.venv-bounds-$$bound; \
		test -x $$venv/bin/python || $(PYTHON) -m venv $$venv || exit 1; \
		$(UV) pip compile --quiet --python $$venv/bin/python --resolution $$resolution --extra test \
			--no-header --no-annotate pyproject.toml -o $$venv/requirements.txt || exit 1; \
		$(UV) pip sync --quiet --python $$venv/bin/python $$venv/requirements.txt || exit 1; \
		$(UV) pip install --quiet --python $$venv/bin/python --no-deps -e . || exit 1; \
		echo "== $$bound: $$(grep -E '^(scikit-learn|mlflow|hydra-core)==' $$venv/requirements.txt | tr '\n' ' ')"; \
		$(KEEP_BYTECODE) $$venv/bin/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal -p no:cacheprovider $(PYTEST_ARGS) \
			|| { status=1; echo "== $$bound: FAILED"; }; \
	done; exit $$status

ONLY ?=

time-readme: install
	$(PY) -m svmrepro.readme_times $(if $(ONLY),--only $(ONLY))

# svmrepro-ui (src/svmrepro/ui.py): MLflow's UI on 127.0.0.1 with its job runner off; it prints each experiment's
# link (its runs table in the "Model training" view, a row per run with its metrics) once the server answers.
ui: install
	$(VENV)/bin/svmrepro-ui --tracking-uri sqlite:///$(CURDIR)/mlflow.db --host 127.0.0.1 --port $(UI_PORT) \
		--workers $(UI_WORKERS)

# from the checkout, so the pages name the study's folder by its relative path (the same on every machine); the runs
# go to a store of their own, build/tutorial/mlflow.db (never committed, made anew), not the project's
TUTORIAL_STUDY := docs/tutorial/study
TUTORIAL_RESULTS := docs/tutorial/results
FROM_CSV ?=

tutorial-results: install
	$(if $(FROM_CSV),,rm -rf build/tutorial && mkdir -p build/tutorial)
	$(PY) -m svmrepro.reproduce --config-dir $(TUTORIAL_STUDY)/conf --experiment moons/sizes \
		--results-dir $(TUTORIAL_RESULTS) $(if $(FROM_CSV),--from-csv,--tracking-uri sqlite:///$(CURDIR)/build/tutorial/mlflow.db)

# the checkout is the source folder (docs/conf.py says why); tests/test_docs.py builds it the same way. Only the
# package and the docs extra are installed for it (the test extra's cluster and browser tools are not needed)
$(DOCS_INSTALLED): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e ".[docs]"
	touch $@

docs: $(DOCS_INSTALLED)
	$(PY) -m sphinx -W --keep-going -q -c docs . build/docs

clean:
	rm -rf outputs multirun results/quick .venv-bounds-*
