"""Which DynamoDB engine serves local runs: AWS DynamoDB Local by default, moto as fallback.

``DYNAMODB_BACKEND`` picks one (``dynamodb-local`` or ``moto``); ``DYNAMODB_ENDPOINT`` (for
``make dev``) points at a server of your own instead. DynamoDB Local is AWS's own engine,
so queries, ``LastEvaluatedKey`` at ``Limit``, byte order, validation and consumed capacity
behave as in the cloud; moto is a mock that scans the whole table for every index query.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from local.engines.dynamodb_local import dynamodb_local, find_jar, unavailable_reason
from local.engines.moto_server import moto_server

DYNAMODB_LOCAL, MOTO = "dynamodb-local", "moto"
BACKENDS = (DYNAMODB_LOCAL, MOTO)


@dataclass(frozen=True)
class Engine:
    """A running engine: what it is (for banners and reports) and where it answers."""

    backend: str
    description: str
    endpoint: str


def backend_from_env() -> str:
    """``DYNAMODB_BACKEND``, checked; DynamoDB Local when unset."""
    backend = os.environ.get("DYNAMODB_BACKEND") or DYNAMODB_LOCAL
    if backend not in BACKENDS:
        raise ValueError(f"DYNAMODB_BACKEND must be one of {', '.join(BACKENDS)}, not {backend!r}")
    return backend


@contextmanager
def local_engine(
    backend: str,
    *,
    fallback: bool = False,
    data_dir: Path | None = None,
    moto_memory_cap_mb: float | None = None,
) -> Iterator[Engine]:
    """Start `backend` on 127.0.0.1 and stop it on exit.

    DynamoDB Local that cannot start (no Java 17+, package not installed) raises, or with
    `fallback` says why in one line and starts moto. `data_dir` keeps DynamoDB Local's
    tables across restarts (moto is always in memory); moto refuses writes once its process
    holds `moto_memory_cap_mb`, and says so in one line.
    """
    if backend == DYNAMODB_LOCAL:
        reason = unavailable_reason()
        if reason is None:
            with dynamodb_local(data_dir) as endpoint:
                release = find_jar().parent.name.removeprefix("dynamodb_local_")
                where = f"data in {data_dir}" if data_dir else "in memory"
                yield Engine(backend, f"AWS DynamoDB Local {release} ({where})", endpoint)
            return
        if not fallback:
            raise RuntimeError(
                f"DynamoDB Local cannot start: {reason}. Install Java 17+ "
                f"(e.g. apt-get install openjdk-17-jre-headless) or set DYNAMODB_BACKEND=moto."
            )
        print(f"DynamoDB Local unavailable ({reason}): falling back to moto", flush=True)
    if moto_memory_cap_mb is not None:
        print(
            f"moto keeps a copy of the table per write transaction (about 25 MB a create at "
            f"100 incidents): writes are refused above {moto_memory_cap_mb:,.0f} MB",
            flush=True,
        )
    with moto_server(memory_cap_mb=moto_memory_cap_mb) as endpoint:
        yield Engine(MOTO, "moto (an in-memory mock, no Java needed)", endpoint)
