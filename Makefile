# Two entry points (see README): `make demo` and `make test`. Both create .venv on
# first use and are idempotent: set-up is redone only when pyproject.toml changes.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.zhbert-installed

.PHONY: setup browser demo test clean
# the browser test drives Debian's chromium (Playwright's own download needs the internet)
# and needs a CJK font, or every Chinese character in the screenshots is a box
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# the CPU build of torch first: an unpinned torch pulls gigabytes of CUDA
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[demo,dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/zhbert demo

browser:
	test -x /usr/bin/chromium && fc-list :lang=zh | grep -q . || { \
	  echo "make test: installing Debian's chromium and a CJK font (fonts-wqy-zenhei) with apt-get, about 500 MB: the demo's browser test drives chromium and needs the font to draw Chinese"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q chromium fonts-wqy-zenhei; }

test: setup browser
	$(VENV)/bin/ruff check .   # the lint configuration is in pyproject.toml
	# two workers: half of the suite's time is subprocesses importing torch, one core each
	$(PY) -m pytest -q -n 2 --dist worksteal tests

clean:
	rm -rf $(VENV)
