"""Shared fixtures: an embedded DynamoDB-compatible server and the project's table on it."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

from dynashard import GrowthPolicy
from incidents.store import Store, build_store
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
