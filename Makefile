# make demo | lab | test | bench | lint | clean     (see README.md)
# make test PYTHONS="3.12" PYTEST_ARGS="-x -k guards"
SHELL := /bin/bash
PYTHONS ?= 3.11 3.12 3.13
PYTEST_ARGS ?=
# The versions whose venv gets the `e2e` extra (jupyterlab, playwright) and must run the
# real-browser test (tests/e2e: JupyterLab in Debian's chromium; .ci/run installs chromium).
# The other versions install `test` only and the browser test skips there (playwright missing,
# TCOMPILE_REQUIRE_BROWSER=0 even under CI): the browser, JupyterLab and the widget's front end
# do not depend on the kernel's Python, and the magics and widgets are tested in-process on
# every version. E2E_PYTHONS="" skips it everywhere; a version outside PYTHONS is not run.
E2E_PYTHONS ?= 3.11
# The versions that run the Triton backend's tests (real kernels in Triton's CPU interpreter,
# which needs torch tensors): torch's CPU build installs offline for Python 3.11 only (a pinned
# wheel on these machines; an unpinned `pip install torch` would pull GBs of CUDA packages). On
# the other versions those tests skip, saying so.
GPU_PYTHONS ?= 3.11
PY311 := .venv/3.11/bin/python

.PHONY: demo lab test bench lint clean

# Runs notebooks/00_quickstart.ipynb headless; writes build/quickstart.html and prints a summary.
demo:
	scripts/venv.sh 3.11 test
	$(PY311) -m tcompile.demo

# JupyterLab on the tutorial notebooks (--allow-root only when run as root, e.g. in a container).
lab:
	scripts/venv.sh 3.11 e2e
	$(PY311) -m jupyterlab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root)

# Runs every version even when one fails, then prints one line per version; fails if any did.
test:
	@status=0; summary=""; \
	for v in $(PYTHONS); do \
	    echo "=== Python $$v ==="; \
	    extras=test,cpu,dask; browser=0; \
	    if [[ " $(E2E_PYTHONS) " == *" $$v "* ]]; then extras=e2e,cpu,dask; browser=1; fi; \
	    if [[ " $(GPU_PYTHONS) " == *" $$v "* ]]; then extras=$$extras,gpu; fi; \
	    if ! scripts/venv.sh $$v $$extras; then \
	        result="FAILED: could not set up .venv/$$v"; \
	    else \
	        TCOMPILE_REQUIRE_BROWSER=$$browser \
	        .venv/$$v/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) 2>&1 \
	            | tee .venv/$$v/pytest.log; \
	        rc=$${PIPESTATUS[0]}; \
	        last=$$(grep -v '^\s*$$' .venv/$$v/pytest.log | tail -n 1); \
	        if [[ $$rc == 0 ]]; then result="ok      $$last"; else result="FAILED  (pytest exit $$rc) $$last"; fi; \
	    fi; \
	    [[ $$result == ok* ]] || status=1; \
	    summary+="Python $$v  $$result"$$'\n'; \
	done; \
	echo; echo "=== summary ==="; printf '%s' "$$summary"; exit $$status

bench:
	scripts/venv.sh 3.11
	$(PY311) -c 'import importlib.util as u; exit(u.find_spec("torch") is None)' \
	    || $(PY311) -m pip install -q torch==2.13.0
	$(PY311) bench/overhead.py
	$(PY311) bench/large_arrays.py

lint:
	scripts/venv.sh 3.11
	$(PY311) -m pip install -q ruff==0.17.6
	c=0; $(PY311) -m ruff check . || c=1; $(PY311) -m ruff format --check . || c=1; exit $$c

clean:
	rm -rf .venv
