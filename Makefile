# The two set-up commands of the README.  Each creates its own virtual
# environment (.venv), installs linsep into it and runs one job.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-minimum docs venv clean clean-numba

venv: $(BIN)/python

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Main job: a quick run of the paper's comparison on the bundled data
# (10 splits of all nine data sets, every method but the slow libsvm SVC);
# it ends by naming the tables and figures it wrote under results/quick.
# `linsep warm-up --bench` first compiles the loops the benchmark runs, once,
# in one process (numba keeps them on disk): the workers then only load them.
# JOBS: the benchmark's worker processes, and the processes of the warm-ups of
# `make test` and `make test-minimum`.
JOBS ?= 2
demo: venv
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/linsep warm-up --bench
	$(BIN)/linsep bench --quick --jobs $(JOBS) --out results/quick

# Test suite (unit, oracle, property and scikit-learn checks), two workers.
# One BLAS thread per worker: NumPy and SciPy each load their own OpenBLAS, and
# two workers with two pools of threads each on two cores spend their time
# waiting for each other (a 4 s test took 126 s that way).
# Tests that force a two- or three-thread compiled pass (`plan={"threads": 2}`) run beside the other worker,
# where OpenMP's default wait spins on a descheduled partner (8 such tests take 5 s alone; in a full run four
# of them took 19–22 s each): the workers' OpenMP threads wait passively.  (A fit's own choice of threads
# already keeps the pass on one thread on a loaded machine: docs/performance_notes.md.)
# `linsep warm-up` compiles every loop once, before the two workers start (they
# would otherwise compile the same loops at once); numba compiles on one core,
# so the warm-up shares the loops among $(JOBS) processes (half the time on two cores).
test: venv
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/linsep warm-up --jobs $(JOBS)
	OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 -q

# The test suite on the oldest versions pyproject.toml declares (ci/constraints-minimum.txt pins each
# declared minimum) under the oldest declared Python, in its own environment (.venv-min), run as `make test`
# runs it.  PYTHON_MIN names a Python 3.10 interpreter.  numba's cache keys carry the versions: the two
# environments never load each other's compiled code.
PYTHON_MIN ?= python3.10
# TEST_MINIMUM_ARGS: pytest arguments (test paths, -m) for a part of the suite; empty: all of it.
TEST_MINIMUM_ARGS ?=
VENV_MIN ?= .venv-min
BIN_MIN := $(VENV_MIN)/bin

$(BIN_MIN)/python:
	$(PYTHON_MIN) -m venv $(VENV_MIN)
	$(BIN_MIN)/python -m pip install --quiet --upgrade pip

test-minimum: $(BIN_MIN)/python
	$(BIN_MIN)/python -m pip install --quiet -c ci/constraints-minimum.txt -e ".[test]"
	$(BIN_MIN)/linsep warm-up --jobs $(JOBS)
	OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN_MIN)/python -m pytest -n 2 -q \
	    $(TEST_MINIMUM_ARGS)

# Documentation site (Sphinx + numpydoc + sphinx-gallery) into docs/_build/html, offline.
# -W: any warning (a broken docstring, a dangling reference, a failed numpydoc
# check) fails the build; --keep-going lists them all first.  First
# docs/generate_tables.py --check: the reproduction's tables are those of the run
# recorded in docs/results/quick (regenerate them with the script).  Then every
# ">>>" example of the user guide and the docstrings runs (-b doctest; the
# gallery is not run twice: plot_gallery=0 there), then the HTML build runs the
# gallery, then docs/check_site.py checks that no page loads anything from
# another host and that every internal link resolves.
DOCS_ENV = OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 MPLBACKEND=Agg
docs: venv
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	$(BIN)/python docs/generate_tables.py --check
	$(DOCS_ENV) $(BIN)/sphinx-build -W --keep-going -b doctest -D plot_gallery=0 \
		-d docs/_build/doctrees-doctest docs docs/_build/doctest
	$(DOCS_ENV) $(BIN)/sphinx-build -W --keep-going -b html docs docs/_build/html
	$(BIN)/python docs/check_site.py docs/_build/html

clean:
	rm -rf $(VENV) $(VENV_MIN) build *.egg-info src/*.egg-info .pytest_cache .hypothesis
	rm -rf docs/_build docs/api docs/auto_examples docs/sg_execution_times.rst

# numba's on-disk cache of linsep's compiled functions beside the sources (linsep keys its entries on every
# compiled source, so an edit recompiles by itself; `linsep warm-up --clean` also clears NUMBA_CACHE_DIR).
clean-numba:
	find src -name '*.nbi' -delete
	find src -name '*.nbc' -delete
