"""Shared fixtures: an embedded DynamoDB-compatible server and the project's table on it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from incidents.table import TABLE_SCHEMA
from local.embedded_dynamodb import (
    create_table,
    embedded_server,
    local_client,
    use_local_credentials,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

use_local_credentials()


@pytest.fixture(scope="session")
def dynamodb_endpoint() -> Iterator[str]:
    """URL of a moto DynamoDB server on 127.0.0.1, started once per test session."""
    with embedded_server() as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def dynamodb(dynamodb_endpoint: str) -> DynamoDBClient:
    """A client for the embedded server, its pool sized for the fan-out tests' threads."""
    return local_client(dynamodb_endpoint, max_pool_connections=32)


@pytest.fixture
def table_name(dynamodb: DynamoDBClient) -> Iterator[str]:
    """A fresh table with the project's schema (PK/SK, GSI1-3, TTL), deleted afterwards."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    create_table(dynamodb, TABLE_SCHEMA, name)
    yield name
    dynamodb.delete_table(TableName=name)
