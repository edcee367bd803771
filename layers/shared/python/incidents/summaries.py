"""Where an incident's summary item is found, and the count of its timeline events it
keeps: what the incident's commands and its timeline both read, so neither imports the
other for it."""

from __future__ import annotations

from dynashard import find_item, sharded_key
from dynashard.keys import MAX_SHARD_COUNT
from dynashard.query import Item
from incidents.store import Store
from incidents.tenant_shards import Family

SEQ_ATTRIBUTE = "event_seq"
"""The summary's count of its incident's timeline events (`incidents.timeline.events`)."""


def read_summary(store: Store, account: str, incident_id: str) -> Item | None:
    """The summary's item by a strongly consistent point read at its shard under the
    account's current count, then (a miss: it moved, or the count changed) under each
    count of its history: one read in the common case, never a scan."""
    family = Family.SUMMARIES
    base = family.base(account)

    def read(shard: int) -> Item | None:  # the count only bounds the shard number
        return store.get(sharded_key(base, shard, MAX_SHARD_COUNT), incident_id)

    return find_item(store.shards.counts(family), family.meta_key(account), base, incident_id, read)
