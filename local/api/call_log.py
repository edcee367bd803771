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
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

TRANSACTION_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}
SQS_BATCH_ACTIONS = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}
RUNNING: ContextVar[str | None] = ContextVar("running_function", default=None)
"""The events-out function whose handler runs in this context (``publisher``, ``sender``),
set by `local.events.event_pipeline`, so its calls are told apart from the API's."""


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
    elif operation in ("BatchGetItem", "BatchWriteItem"):  # the Service Authorization
        for name in params["RequestItems"]:  # Reference: each batch is its own action
            yield f"dynamodb:{operation}", resource(name)
    else:
        yield f"dynamodb:{operation}", resource(params["TableName"], params.get("IndexName"))


def messaging_permissions(
    service: str, operation: str, params: Mapping[str, Any]
) -> tuple[str, str]:
    """The (action, resource) of an SQS call on the delivery queue or the timers' firing
    queue, or an EventBridge call on the bus (the only queues and bus the handlers use)."""
    if service == "sqs":
        queue = "timer-queue" if "-timers" in str(params.get("QueueUrl", "")) else "queue"
        return f"sqs:{SQS_BATCH_ACTIONS.get(operation, operation)}", queue
    return f"events:{operation}", "bus"


class CallRecorder:
    """Records the calls of a botocore client (DynamoDB, its streams, SQS or EventBridge) for the
    handler group being served."""

    def __init__(
        self, table: str, group: Callable[[], str | None], sink: Callable[[Call], None]
    ) -> None:
        self._table = table
        self._group = group
        self._sink = sink

    def attach(self, client: Any) -> None:
        """Record every call `client` makes from now on."""
        service = client.meta.service_model.endpoint_prefix
        client.meta.events.register(f"provide-client-params.{service}.*", self._record)

    def _record(self, params: Mapping[str, Any], model: Any, **_: Any) -> None:
        group = RUNNING.get() or self._group()
        if group is None:
            return  # not inside a handler (seeding, test set-up)
        service = model.service_model.endpoint_prefix
        if service == "dynamodb":
            found = list(permissions(model.name, params, self._table))
        elif service == "streams.dynamodb":
            found = [(f"dynamodb:{model.name}", "table-stream")]
        else:
            found = [messaging_permissions(service, model.name, params)]
        for action, resource in found:
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


def write_calls(path: Path, calls: set[Call]) -> None:
    """Append `calls` to a file `read_calls` reads."""
    with path.open("a") as out:
        out.writelines(json.dumps(asdict(call)) + "\n" for call in calls)
