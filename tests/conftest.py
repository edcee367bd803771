"""Shared fixtures: a local DynamoDB engine and the project's table on it.

The engine is AWS DynamoDB Local unless ``DYNAMODB_BACKEND=moto``; moto also serves what
DynamoDB Local does not (Secrets Manager), and the fan-out property tests run on both.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from dynashard import GrowthPolicy
from incidents.store import Store, build_store
from incidents.table import TABLE_SCHEMA
from local.api.call_log import Call, read_calls, write_calls
from local.engines.clients import create_table, local_client, use_local_credentials
from local.engines.dynamodb_local import running_jvms
from local.engines.embedded_dynamodb import MOTO, Engine, backend_from_env, local_engine
from local.engines.moto_server import moto_server

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from tests.helpers.synth import Stages

use_local_credentials()


def pytest_report_header() -> str:
    """Say which engine the integration and end-to-end suites run on."""
    return f"DynamoDB engine: {backend_from_env()} (DYNAMODB_BACKEND)"


@dataclass
class HandlerCalls:
    """Every AWS call the handlers made, per group (see `local.api.call_log`): this process's in
    memory, and the call logs in `directory` (``make dev`` subprocesses', other workers')."""

    directory: Path
    shared: bool
    """Whether `directory` is the run's (``HANDLER_CALLS_DIR``, which ``make test`` sets)."""
    calls: set[Call] = field(default_factory=set)

    def log_file(self, name: str) -> Path:
        """Where a subprocess named `name` appends its calls."""
        return self.directory / f"{name}.jsonl"

    def all(self) -> set[Call]:
        """In-process calls and every call log in the directory."""
        return self.calls.union(*map(read_calls, self.directory.glob("*.jsonl")))


@pytest.fixture(scope="session")
def handler_calls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HandlerCalls]:
    """Where the integration and end-to-end suites record the handlers' calls; the session's
    in-process calls are written to the directory when it ends, for the least-privilege check
    that ``make test`` runs after every worker has finished."""
    shared = os.environ.get("HANDLER_CALLS_DIR")
    directory = Path(shared) if shared else tmp_path_factory.mktemp("calls")
    directory.mkdir(parents=True, exist_ok=True)
    recorded = HandlerCalls(directory, shared=bool(shared))
    yield recorded
    write_calls(recorded.log_file(f"in-process-{os.getpid()}"), recorded.calls)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests under ``tests/e2e`` are marked ``e2e``. Files holding a ``slow`` test come
    first, so the workers start on them rather than finish on one (``make test`` hands
    out files in this order); tests marked ``after_suites`` read what the others recorded,
    so run last."""
    for item in items:
        if "e2e" in item.path.parts:
            item.add_marker(pytest.mark.e2e)
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(
        key=lambda item: (
            item.get_closest_marker("after_suites") is not None,
            item.path not in slow,
        )
    )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run if a DynamoDB Local JVM it started is still alive (and end it)."""
    leftover = running_jvms(parent=os.getpid())
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    if leftover:
        print(f"\nFAILED: DynamoDB Local JVMs survived the test run: {leftover}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    """The session's DynamoDB engine on 127.0.0.1 (DynamoDB Local unless DYNAMODB_BACKEND=moto)."""
    with local_engine(backend_from_env()) as started:
        yield started


@pytest.fixture(scope="session")
def dynamodb_endpoint(engine: Engine) -> str:
    """URL of the session's DynamoDB engine."""
    return engine.endpoint


@pytest.fixture(scope="session")
def moto_endpoint(engine: Engine) -> Iterator[str]:
    """A moto server for what DynamoDB Local does not serve (Secrets Manager); the session's
    engine itself when that is moto."""
    if engine.backend == MOTO:
        yield engine.endpoint
        return
    with moto_server() as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def dynamodb(dynamodb_endpoint: str) -> DynamoDBClient:
    """A client for the embedded server, its pool sized for the fan-out tests' threads."""
    return local_client(dynamodb_endpoint, max_pool_connections=32)


@pytest.fixture(scope="module")
def module_table(dynamodb: DynamoDBClient) -> str:
    """One table with the project's schema for a module's tests (each uses its own keys)."""
    name = f"module-{uuid.uuid4().hex[:12]}"
    create_table(dynamodb, TABLE_SCHEMA, name)
    return name


@pytest.fixture
def new_table(dynamodb: DynamoDBClient) -> Iterator[Callable[[], str]]:
    """Makes fresh tables with the project's schema (PK/SK, GSI1-3, TTL); drops them afterwards.

    Property tests take one per example: moto's Query scans the whole table, so a table
    that keeps growing across examples makes every request slower.
    """
    created: list[str] = []

    def make() -> str:
        name = f"test-{uuid.uuid4().hex[:12]}"
        create_table(dynamodb, TABLE_SCHEMA, name)
        created.append(name)
        return name

    yield make
    for name in created:
        dynamodb.delete_table(TableName=name)


@pytest.fixture
def table_name(new_table: Callable[[], str]) -> str:
    """One fresh table with the project's schema."""
    return new_table()


@pytest.fixture
def store(dynamodb: DynamoDBClient, table_name: str) -> Iterator[Store]:
    """The incident services' store on a fresh table; participants start with 4 shards so
    every list fans out."""
    built = build_store(
        dynamodb,
        table_name,
        b"test-cursor-secret-" * 2,
        participant_policy=GrowthPolicy(default_count=4),
    )
    yield built
    built.engine.close()


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Stages:
    """Stages of the app, each synthesized once in this test process (the CDK is imported
    only by the tests that synthesize)."""
    from tests.helpers.synth import Stages  # noqa: PLC0415 - aws_cdk starts a node process

    return Stages(tmp_path_factory)
