"""Keyed commands (``Idempotency-Key``): the guard a keyed create or note writes in its own
transaction, so a second run with the same key, whatever path it takes (a retry after the
idempotency record was lost or expired early), fails on the guard and answers what the
first one wrote.

A key's answer is the key's own: the guard keeps a digest of the request it guards (the
command, its incident and text, or its body), so the same key with another request is a
409 however the request arrives; and it lapses exactly as the Powertools record does (an
``ExpiresAt`` in the past is no guard, even before TTL deletes it), so a lapsed key is a
new request, never an old answer for another resource.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from dynashard.query import Item
from incidents.errors import KeyReusedError
from incidents.items import deserialize, serialize
from incidents.keys import create_once_key
from incidents.store import Caller, Store
from incidents.table import PK, SK

KEY_SECONDS = 24 * 3600
"""How long a keyed command's guard lasts: as long as its idempotency record."""
LAPSED_OR_ABSENT = f"attribute_not_exists({PK}) OR ExpiresAt < :now"
"""A guard may be written where none is or where one has lapsed (Powertools' own rule)."""


def request_digest(request: dict[str, Any]) -> str:
    """What a guard compares: the command and everything it was asked, as one digest."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def guard_operations(
    store: Store, caller: Caller, request_key: str, digest: str, written: dict[str, Any]
) -> list[Item]:
    """The transaction's Put of a keyed command's guard: the request's `digest` and what it
    wrote, `written` (expires with the key; overwrites a lapsed guard)."""
    pk, sk = create_once_key(caller.account_id, caller.user_id, request_key)
    now = int(store.clock().timestamp())
    values = {"Type": "create_once", "request": digest, **written, "ExpiresAt": now + KEY_SECONDS}
    put = {
        "TableName": store.table_name,
        "Item": serialize({PK: pk, SK: sk, **values}),
        "ConditionExpression": LAPSED_OR_ABSENT,
        "ExpressionAttributeValues": {":now": {"N": str(now)}},
    }
    return [{"Put": put}]


def guarded(store: Store, caller: Caller, request_key: str, digest: str) -> dict[str, Any] | None:
    """What an earlier keyed command with `request_key` wrote (strongly consistent), None if
    there was none or its guard lapsed; `KeyReusedError` if it guarded another request."""
    item = store.get(*create_once_key(caller.account_id, caller.user_id, request_key))
    if item is None:
        return None
    guard = deserialize(item)
    if int(guard["ExpiresAt"]) < int(store.clock().timestamp()):
        return None
    if guard.get("request", digest) != digest:  # guards written before digests: their TTL
        raise KeyReusedError("this Idempotency-Key was used with another request")
    return guard
