"""Secret keys machines send: 32 random bytes with a type prefix, shown once and stored
only as their SHA-256 (a stolen table gives no working key, and a key that high in entropy
needs no slow hash). A key finds what it belongs to by one point read of its lookup item,
``<kind>#<hash>`` (sort key ``<kind>``), which is not under any account: the key is all a
machine sends. An unknown key and a revoked one take the same path (that read finds
nothing)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta

from dynashard import build_key
from dynashard.query import Item
from incidents.items import serialize
from incidents.models import timestamp
from incidents.store import Store
from incidents.table import PK, SK, item_key, key_of

LAST_USED_EVERY = timedelta(minutes=1)
"""`last_used_at` moves at most this often (a busy key does not write it per request)."""


def new_key(prefix: str) -> str:
    """A fresh key: `prefix` and 32 random bytes."""
    return prefix + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    """What is stored of a key."""
    return hashlib.sha256(key.encode()).hexdigest()


def lookup_key(kind: str, key_digest: str) -> Item:
    """The key of the lookup item of a key of `kind` by its digest."""
    return item_key(build_key(kind, key_digest), kind)


def lookup_item(kind: str, key: str, account: str, owner_id: str) -> Item:
    """The item `key` finds its account and owner (an integration, an API key) by."""
    return {
        **lookup_key(kind, digest(key)),
        **serialize({"Type": f"{kind}_lookup", "account_id": account, "owner_id": owner_id}),
    }


def find(store: Store, kind: str, key: str) -> tuple[str, str] | None:
    """(account, owner id) of `key`, or None for a key unknown or revoked."""
    where = lookup_key(kind, digest(key))
    item = store.get(where[PK]["S"], where[SK]["S"], consistent=False)
    return (item["account_id"]["S"], item["owner_id"]["S"]) if item else None


def owner_of(
    store: Store, kind: str, key: str, partition: Callable[[str], str]
) -> tuple[str, Item] | None:
    """(account, the owner's item) of `key`, its use noted; None for a key unknown or
    revoked. The owner's item is in `partition(account)` under its id."""
    found = find(store, kind, key)
    stored = found and store.get(partition(found[0]), found[1], consistent=False)
    if not (found and stored):
        return None
    if stored.get("key_hash", {}).get("S", digest(key)) != digest(key):
        return None  # rotated away since the lookup was read
    used = stored.get("last_used_at", {}).get("S")
    if not mark_used(store, key_of(stored), used):
        return None  # deleted or revoked meanwhile: the same 401 as a key never known
    return found[0], stored


def mark_used(store: Store, where: Item, last_used_at: str | None) -> bool:
    """Note the owner's `last_used_at` at `where`, if the last note is a minute old;
    False if the owner is gone (deleted or revoked while the request ran)."""
    now = store.clock()
    if last_used_at and last_used_at > timestamp(now - LAST_USED_EVERY):
        return True
    try:
        store.client.update_item(
            TableName=store.table_name,
            Key=where,
            UpdateExpression="SET last_used_at = :now",
            ConditionExpression=f"attribute_exists({PK})",
            ExpressionAttributeValues={":now": {"S": timestamp(now)}},
        )
    except store.client.exceptions.ConditionalCheckFailedException:
        return False
    return True
