"""Which of the table's grown counts are cold, and how each halves: the incident domain's
side of `dynashard.resharding.cold`. A counted key (`dynashard.counted_keys`) is one of an account's
families (`incidents.tenant_shards`) or a participant's partition of GSI1; its recent items
are those whose sort key starts at or after the window's start (summaries: their KSUID id;
lists and events: their time; participations: their state, then their time).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ksuid import Ksuid

from dynashard import PartitionStream, SortKeyRange, shard_keys
from dynashard.keys import split_key
from dynashard.resharding import ColdPolicy, MoveSpec, ShardMeta
from incidents.models import State, timestamp
from incidents.table import GSI1, GSI2, TABLE_SCHEMA
from incidents.tenant_shards import Family

PARTICIPANTS = MoveSpec(index=GSI1, hashed="incident_id")
PARTICIPANT_SUFFIX = "incpart"
COLD = ColdPolicy()
LATEST = "~"
"""Sorts after every time and id character: the open end of a window."""


@dataclass(frozen=True)
class ColdCheck:
    """How a counted key halves, and the streams holding what it took in the window."""

    spec: MoveSpec
    recent: list[PartitionStream]


def cold_check(table: str, meta: ShardMeta, since: datetime) -> ColdCheck | None:
    """The check of `meta`'s key over the window from `since`; None for a key this domain
    does not know (left alone)."""
    key = meta.key
    account = split_key(key.partition)[0]
    keys = shard_keys(key.base, meta.read_count)
    at = timestamp(since)
    for family in Family:
        if family.base(account) != key.base:
            continue
        if family is Family.SUMMARIES:
            first_id = "inc_" + str(Ksuid(datetime=since, payload=bytes(16)))
            window = SortKeyRange.between(first_id, "inc_" + LATEST)
            pk_name, sk_name = TABLE_SCHEMA.partition_key, TABLE_SCHEMA.sort_key
            streams = [PartitionStream(table, pk_name, pk, sk_name, window) for pk in keys]
        else:
            window = SortKeyRange.between(at, LATEST)
            streams = [
                PartitionStream(table, GSI2.partition_key, pk, GSI2.sort_key, window, GSI2.name)
                for pk in keys
            ]
        return ColdCheck(family.move_spec(), streams)
    if split_key(key.base)[-1] != PARTICIPANT_SUFFIX:
        return None
    streams = [
        PartitionStream(table, GSI1.partition_key, pk, GSI1.sort_key, window, GSI1.name)
        for pk in keys
        for window in (
            SortKeyRange.between(f"{s.value}#{at}", f"{s.value}#{LATEST}") for s in State
        )
    ]
    return ColdCheck(PARTICIPANTS, streams)
