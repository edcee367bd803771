"""The incident store on a fresh table of AWS DynamoDB Local, for the benches that measure
the services themselves."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, Engine, local_engine


@contextmanager
def local_store(table: str) -> Iterator[tuple[Store, Caller, Engine]]:
    """A store on `table` (created with the project's schema), a caller in a new account,
    and the engine (for its description); the engine stops on exit."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, table)
        store = build_store(client, table, b"bench-cursor-secret-" * 2)
        try:
            yield store, Caller(new_id("acct"), new_id("user")), engine
        finally:
            store.engine.close()
