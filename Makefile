# aqmlab developer entry points. `make demo` and `make test` are the README's two commands:
# each sets up everything it needs (a .venv with the package built from source) on its own.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
RESULTS ?= results/default

.PHONY: setup demo test test-rust test-python bench clean ns2

# A virtualenv with the Python dependencies and the Rust extension built in release mode.
# `maturin develop` rebuilds incrementally, so running it every time keeps the .so current.
setup:
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --disable-pip-version-check 'maturin>=1.5,<2'
	$(BIN)/maturin develop --release -q -E test

# Runs the built-in default scenario (10 NewReno flows, 10 Mb/s 20 ms RED dumbbell).
demo: setup
	$(BIN)/aqmlab run --out $(RESULTS)

test-rust:
	cargo test -p aqmlab-core -p aqmlab-live -q

test-python: setup ns2
	$(BIN)/python -m pytest -q

# ns-2.35 for the ns-2 cross-check (tests/test_ns2_crosscheck.py), from Debian's packages when
# possible (root with apt-get); elsewhere the cross-check is skipped and says so. CI installs it.
ns2:
	@command -v ns >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q ns2 >/dev/null || \
		  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ns2 >/dev/null; }; }; } || \
		echo "ns-2 not installed (needs root and apt-get): the ns-2 cross-check will be skipped"

test: test-rust test-python

bench: setup
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) target results
