"""A record of the AWS calls the handlers make, as the IAM actions and resources they need.

The tests attach a `CallRecorder` to the handlers' DynamoDB client (in process, and in
``make dev`` through ``AWS_CALL_LOG``) and check every call against the function's
synthesized policy. One API call can need several IAM actions: a ``TransactWriteItems``
needs the action of each item it holds (``PutItem``, ``UpdateItem``, ``DeleteItem``,
``ConditionCheckItem``), a batch call its action on each table it names, and a query on
an index the index's ARN.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

TRANSACTION_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}
BATCH_WRITE_ACTIONS = {"PutRequest": "PutItem", "DeleteRequest": "DeleteItem"}


@dataclass(frozen=True)
class Call:
    """One IAM permission a handler group used: ``dynamodb:Query`` on ``table/index/GSI1``."""

    group: str
    action: str
    resource: str


def permissions(operation: str, params: Mapping[str, Any], table: str) -> Iterator[tuple[str, str]]:
    """The (action, resource) pairs DynamoDB checks for one call; `table` is the handlers'
    table, named ``table`` in the result (any other name is kept, to fail the check)."""

    def resource(name: str, index: str | None = None) -> str:
        base = "table" if name == table else f"other-table:{name}"
        return f"{base}/index/{index}" if index else base

    if operation == "TransactWriteItems":
        for item in params["TransactItems"]:
            ((kind, body),) = item.items()
            yield f"dynamodb:{TRANSACTION_ACTIONS[kind]}", resource(body["TableName"])
    elif operation == "BatchWriteItem":
        for name, requests in params["RequestItems"].items():
            for request in requests:
                ((kind, _),) = request.items()
                yield f"dynamodb:{BATCH_WRITE_ACTIONS[kind]}", resource(name)
    elif operation == "BatchGetItem":
        for name in params["RequestItems"]:
            yield "dynamodb:BatchGetItem", resource(name)
    else:
        yield f"dynamodb:{operation}", resource(params["TableName"], params.get("IndexName"))


class CallRecorder:
    """Records the calls of a botocore DynamoDB client for the handler group being served."""

    def __init__(
        self, table: str, group: Callable[[], str | None], sink: Callable[[Call], None]
    ) -> None:
        self._table = table
        self._group = group
        self._sink = sink

    def attach(self, client: Any) -> None:
        """Record every call `client` makes from now on."""
        client.meta.events.register("provide-client-params.dynamodb.*", self._record)

    def _record(self, params: Mapping[str, Any], model: Any, **_: Any) -> None:
        group = self._group()
        if group is None:
            return  # not inside a handler (seeding, test set-up)
        for action, resource in permissions(model.name, params, self._table):
            self._sink(Call(group, action, resource))


class CallFile:
    """A sink appending calls to a JSON-lines file (one process, many threads)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()

    def __call__(self, call: Call) -> None:
        with self._lock, self._path.open("a") as out:
            out.write(json.dumps(asdict(call)) + "\n")


def read_calls(path: Path) -> set[Call]:
    """The calls a `CallFile` wrote."""
    if not path.exists():
        return set()
    return {Call(**json.loads(line)) for line in path.read_text().splitlines() if line}
