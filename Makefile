# Two commands on a fresh machine:  `make demo` (the main job) and `make test`.
# The demo needs Python, plus Java and Maven when it starts its own Neo4j; the tests also need
# node and npm, for the MCP clients they drive the server with.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin

.PHONY: install test-clients demo test lint neo4j-stop clean

$(BIN)/flowstate: pyproject.toml bench/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,mcp,agent]' -e ./bench
	@touch $@

# The MCP clients the tests drive the server with (TypeScript SDK, MCP Inspector), from npm.
NODE_CLIENTS = tests/node/node_modules/.package-lock.json

$(NODE_CLIENTS): tests/node/package.json tests/node/package-lock.json
	@command -v npm >/dev/null || { echo "make: npm is missing: the MCP tests need node and npm (make demo does not)" >&2; exit 1; }
	npm ci --prefix tests/node --no-audit --no-fund --loglevel=error
	@touch $@

install: $(BIN)/flowstate

test-clients: $(NODE_CLIENTS)

demo: install
	$(BIN)/flowstate demo

test: install test-clients
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check flowstate tests bench
	$(BIN)/ruff format --check flowstate tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

neo4j-stop: install
	$(BIN)/flowstate neo4j stop

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis tests/node/node_modules
