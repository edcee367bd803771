"""The library's DynamoDB fixtures: one DynamoDB Local a session (`dynashard.testing`'s
launcher, started only when a test asks for it), moto beside it for the properties' twin,
and fresh tables of a single table's usual schema.

Nothing of the repository this package grew in is imported: ``pytest`` in
``packages/dynashard`` is the library's whole proof, wherever the package lives.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

from dynashard.testing.dynamodb_local import (
    SINGLE_TABLE,
    create_table,
    dynamodb_local,
    local_client,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    os.environ.setdefault(variable, "local")  # dummy credentials: nothing reaches AWS
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture(scope="session")
def dynamodb_endpoint() -> Iterator[str]:
    """URL of the session's DynamoDB Local (``DYNASHARD_TEST_ENDPOINT``: one of your own)."""
    if given := os.environ.get("DYNASHARD_TEST_ENDPOINT"):
        yield given
        return
    with dynamodb_local() as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto's server in this process: the second engine the fan-out properties run on."""
    from moto.server import ThreadedMotoServer  # noqa: PLC0415 - only the property twin needs it

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
def dynamodb(dynamodb_endpoint: str) -> DynamoDBClient:
    """A client of the session's DynamoDB Local, its pool sized for the fan-out's threads."""
    return local_client(dynamodb_endpoint, max_pool_connections=32)


@pytest.fixture(scope="module")
def module_table(dynamodb: DynamoDBClient) -> str:
    """One table for a module's tests (each uses keys of its own)."""
    name = f"module-{uuid.uuid4().hex[:12]}"
    create_table(dynamodb, SINGLE_TABLE, name)
    return name


@pytest.fixture
def new_table(dynamodb: DynamoDBClient) -> Iterator[Callable[[], str]]:
    """Makes fresh tables (`SINGLE_TABLE`'s schema), dropped after the test."""
    created: list[str] = []

    def make() -> str:
        name = f"test-{uuid.uuid4().hex[:12]}"
        create_table(dynamodb, SINGLE_TABLE, name)
        created.append(name)
        return name

    yield make
    for name in created:
        dynamodb.delete_table(TableName=name)


@pytest.fixture
def table_name(new_table: Callable[[], str]) -> str:
    """One fresh table."""
    return new_table()
