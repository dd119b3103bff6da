# zen: `make install` sets everything up, `make demo` runs the main job, `make test` checks it all.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
PY      = $(BIN)/python
XDIST  ?= -n auto

.PHONY: install test test-fast test-claude test-agents test-ray lint typecheck check demo bench screenshot clean

# the real-agent suites (marked `agents`): each installs its pinned agent into .cache/ and runs
# serially, like tests/claude
AGENT_SUITES = tests/codex tests/gemini tests/aider

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)
	@# the optional extra `ray` too: the tests run turns on a real local Ray cluster (tests/ray)
	$(PY) -m pip install -q -e ".[dev,ray]"
	@# an editable install leaves zen's own modules uncompiled; the guard hook starts for every
	@# agent command, so compile them now (this holds even where PYTHONDONTWRITEBYTECODE is set)
	$(PY) -m compileall -q zen
	@$(BIN)/zen --version

test: $(PY)
	$(PY) -m pytest $(XDIST) -q -m "not claude and not agents"
	$(PY) -m pytest -q -m ray tests/ray
	@bash tests/claude/install.sh >/dev/null || echo "make test: Claude Code could not be installed; tests/claude will skip what needs it"
	$(PY) -m pytest -q -m claude tests/claude tests/sandbox tests/attached
	@for s in $(AGENT_SUITES); do bash $$s/install.sh >/dev/null || echo "make test: the agent of $$s could not be installed; $$s will skip what needs it"; done
	$(PY) -m pytest -q -m agents $(AGENT_SUITES) tests/sandbox/codex tests/attached/codex tests/attached/gemini

test-fast: $(PY)
	$(PY) -m pytest $(XDIST) -q -m "not slow and not claude and not agents"

test-claude: $(PY)
	bash tests/claude/install.sh
	$(PY) -m pytest -q -m claude tests/claude tests/sandbox tests/attached

test-agents: $(PY)
	@for s in $(AGENT_SUITES); do bash $$s/install.sh >/dev/null || exit 1; done
	$(PY) -m pytest -q -m agents $(AGENT_SUITES) tests/sandbox/codex tests/attached/codex tests/attached/gemini

# one real two-node Ray cluster on 127.0.0.1 for the whole run: serial, never one per xdist worker
test-ray: $(PY)
	$(PY) -m pytest -q -m ray tests/ray

lint: $(PY)
	$(BIN)/ruff check zen tests bench

typecheck: $(PY)
	$(BIN)/mypy zen

check: lint typecheck test

# the same as `zen demo`, which an installed zen (a wheel, pipx) runs from any directory
demo: $(PY)
	$(BIN)/zen demo

bench: $(PY)
	$(PY) bench/run.py

# README's pictures: zen watch on the fixed scene the snapshot test uses, and the dashboard on a
# real sim fleet in headless chromium (desktop Sessions and Grid, a phone's Needs you)
screenshot: $(PY)
	$(PY) -m tests.tui.scene docs/zen-watch.svg
	$(PY) -m tests.web.screens docs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info
