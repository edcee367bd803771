"""An embedded DynamoDB-compatible server (moto's server mode) on 127.0.0.1.

Used by the test fixtures and by ``make dev``; the table is created from the shared
schema, so local runs see exactly the keys and indexes the CDK stack deploys.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

from dynashard.schema import TableSchema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

LOCAL_REGION = "us-east-1"
LOCAL_KEY_ID = "local"
LOCAL_SECRET = "local"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def use_local_credentials() -> None:
    """Point boto3's default chain at dummy credentials so nothing reaches real AWS."""
    os.environ.setdefault("AWS_DEFAULT_REGION", LOCAL_REGION)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", LOCAL_KEY_ID)
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", LOCAL_SECRET)


class OneRequestAtATime:
    """WSGI middleware that lets one request at a time into moto's backend.

    DynamoDB applies every request atomically, and a transaction is serializable with
    the single-item writes around it. moto's backend has no locks, so its threaded server
    can interleave a ``TransactWriteItems`` (check, then write) with another thread's
    ``PutItem``; tests of races would then test moto. Connections are still accepted
    concurrently; moto is bound by the GIL anyway, so little throughput is lost.
    """

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with self._lock:
            return list(self._app(environ, start_response))


@contextmanager
def embedded_server(port: int | None = None) -> Iterator[str]:
    """Run moto's DynamoDB server on 127.0.0.1 and yield its endpoint URL."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    chosen = port or free_port()
    app = OneRequestAtATime(DomainDispatcherApplication(create_backend_app))
    server = make_server(
        "127.0.0.1", chosen, app, threaded=True, request_handler=MotoRequestHandler
    )
    thread = threading.Thread(target=server.serve_forever, name="dynamodb", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{chosen}"
    finally:
        server.shutdown()
        thread.join()


def local_client(endpoint_url: str, max_pool_connections: int = 10) -> DynamoDBClient:
    """A DynamoDB client for a local endpoint with dummy credentials."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=LOCAL_REGION,
        config=Config(max_pool_connections=max_pool_connections),
        aws_access_key_id=LOCAL_KEY_ID,
        aws_secret_access_key=LOCAL_SECRET,
    )


def create_table(client: DynamoDBClient, schema: TableSchema, table_name: str) -> None:
    """Create `table_name` from `schema`, wait until it is active, and enable its TTL."""
    client.create_table(**schema.create_table_request(table_name))
    client.get_waiter("table_exists").wait(
        TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
    )
    if schema.ttl_attribute:
        client.update_time_to_live(
            TableName=table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": schema.ttl_attribute},
        )
