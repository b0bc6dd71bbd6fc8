# Two commands matter: `make run` (install, initialise, serve) and `make test` (the whole suite).
# `make run` installs only the server's runtime dependencies; `make test` adds the `test` extra
# (pytest, Playwright, schemathesis, mypy, ruff ...), each behind its own sentinel file.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run install install-test test lint format clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(BIN)/.installed-test: $(BIN)/.installed pyproject.toml
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

install: $(BIN)/.installed

# axe-core, from the npm registry, for the browser tests' accessibility checks (tests/browser/axe.py).
AXE := .axe/node_modules/axe-core/axe.min.js
$(AXE):
	npm install --no-save --no-audit --no-fund --prefix .axe axe-core@4.14.1

install-test: $(BIN)/.installed-test $(AXE)

# The worker beside the server (a Celery worker on the embedded broker, a SQLite file in the
# instance folder) runs what is queued: analyses, freezes, verifications, re-scores, charts and
# mail, and the periodic jobs (scheduled releases, deadline notices) with no flag; it stops with
# the server. Links in mail start with the address served here unless
# LEADERBOARD_BASE_URL is set; with the default console transport the worker writes each mail
# (and its link) to this terminal.
run: install
	$(BIN)/leaderboard init
	@export LEADERBOARD_BASE_URL="$${LEADERBOARD_BASE_URL:-http://$(HOST):$(PORT)}"; \
	$(BIN)/leaderboard worker & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(BIN)/gunicorn --bind $(HOST):$(PORT) wsgi:app

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The whole suite on SQLite, then again on PostgreSQL when a server answers (required under CI=true).
test: install-test lint
	$(BIN)/pytest -q
	@url=$$($(BIN)/python -m tests.postgres) || exit 1; \
	if [ -n "$$url" ]; then \
		echo "== the suite again on PostgreSQL ($$url)"; \
		LEADERBOARD_TEST_DATABASE_URL="$$url" $(BIN)/pytest -q; \
	fi

format: install-test
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .axe .pytest_cache .mypy_cache .ruff_cache
