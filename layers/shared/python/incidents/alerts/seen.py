"""What an integration sent, seen once: a body seen again within `SEEN_SECONDS` is a retry
(a tool resending what it got no answer to, or sending it twice at once) and answers what
its first delivery got. Alerts (`incidents.alerts.ingest`) and change events
(`incidents.alerts.changes`) each write their *seen* item, keyed by a digest of the
integration and the body, in the transaction that counts or keeps them; a retry fails on it
and reads the first answer."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel

from dynashard import build_key, calculated_shard, sharded_key
from dynashard.query import Item
from incidents.errors import DomainError
from incidents.items import deserialize, serialize
from incidents.keyed import request_digest
from incidents.store import Store
from incidents.table import PK, SK
from incidents.timeline.events import pause_before_retry

SEEN_SHARDS = 16
SEEN_SECONDS = 300
"""A body seen again within this window is a retry of the same alert or change."""

A = TypeVar("A", bound=BaseModel)


class SeenError(DomainError):
    """This body was counted before (never leaves the alerts package)."""


def body_digest(integration_id: str, kind: str, body: BaseModel) -> str:
    """What tells a retry from a new body: its integration, its kind (``alert``,
    ``change``) and the body (the integration key left out, however it was sent)."""
    sent = body.model_dump(mode="json", exclude={"routing_key"})
    return request_digest({"integration": integration_id, kind: sent})


def seen_put(
    store: Store, account: str, digest: str, answer: BaseModel, replaced: str | None = None
) -> Item:
    """The Put of a body's seen item, keeping its `answer`: where none is, where one has
    lapsed, or where one names the resolved incident this trigger replaces (the same body
    after a resolve is a new alert, not a retry: a flapping check sends the same words
    again)."""
    pk, sk = _seen_item(account, digest)
    now = int(store.clock().timestamp())
    values = {PK: pk, SK: sk, "Type": "alert_seen", "ExpiresAt": now + SEEN_SECONDS,
              **answer.model_dump(mode="json")}  # fmt: skip
    condition = f"attribute_not_exists({PK}) OR ExpiresAt < :now"
    bound: dict[str, Any] = {":now": {"N": str(now)}}
    if replaced is not None:
        condition += " OR incident_id = :replaced"
        bound[":replaced"] = {"S": replaced}
    return {
        "Put": {
            "TableName": store.table_name,
            "Item": serialize(values),
            "ConditionExpression": condition,
            "ExpressionAttributeValues": bound,
        }
    }


def seen_answer(store: Store, account: str, digest: str, answer: type[A]) -> A | None:
    """The answer an earlier delivery of this body got, within the window."""
    item = store.get(*_seen_item(account, digest))
    if item is None or int(item["ExpiresAt"]["N"]) < int(store.clock().timestamp()):
        return None
    values = deserialize(item)
    return answer.model_validate({name: values.get(name) for name in answer.model_fields})


def tries(seconds: float) -> Iterator[int]:
    """Tries of a body losing races (to its own retries, or on its alert's key): a
    jittered pause before each retry, and none once `seconds` have passed."""
    deadline = time.monotonic() + seconds
    for attempt in itertools.count():
        if attempt:
            pause_before_retry(min(attempt - 1, 6))
        if time.monotonic() > deadline:
            return
        yield attempt


def _seen_item(account: str, digest: str) -> tuple[str, str]:
    base = build_key(account, "alertseen")
    return sharded_key(base, calculated_shard(base, digest, SEEN_SHARDS), SEEN_SHARDS), digest
