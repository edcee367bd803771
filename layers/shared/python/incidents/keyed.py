"""Keyed commands (``Idempotency-Key``): the guard a keyed create or note writes in its own
transaction, so a second run with the same key, whatever path it takes (a retry after the
idempotency record was lost or expired early), fails on the guard and answers what the
first one wrote."""

from __future__ import annotations

from typing import Any

from dynashard import Item
from incidents.items import deserialize, serialize
from incidents.keys import create_once_key
from incidents.store import Caller, Store

KEY_SECONDS = 24 * 3600
"""How long a keyed command's guard lasts: as long as its idempotency record."""


def guard_operations(
    store: Store, caller: Caller, request_key: str, written: dict[str, Any]
) -> list[Item]:
    """The transaction's Put of a keyed command's guard, naming what it wrote, `written` (expires
    with the key)."""
    pk, sk = create_once_key(caller.account_id, caller.user_id, request_key)
    expires = int(store.clock().timestamp()) + KEY_SECONDS
    item = serialize({"PK": pk, "SK": sk, "Type": "create_once", **written, "ExpiresAt": expires})
    return [store.put_operation(item, new=True)]


def guarded(store: Store, caller: Caller, request_key: str) -> dict[str, Any] | None:
    """What an earlier keyed command with `request_key` wrote (strongly consistent)."""
    guard = store.get(*create_once_key(caller.account_id, caller.user_id, request_key))
    return deserialize(guard) if guard else None
