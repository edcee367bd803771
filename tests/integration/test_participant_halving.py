"""A participant's shard count halved online under its "my incidents" list (issue 38,
point 2, on the domain's dynamic family), on DynamoDB Local: a participant grown to 4
shards of GSI1 goes back to 2 with the mover pointing each participation's GSI1PK at its
new shard, while the list is walked a page at a time and incidents are created; the walk
returns every incident once, newest first, and the list then reads 2 shards."""

from __future__ import annotations

import dataclasses

import pytest

from dynashard import GrowthPolicy, IndexSchema, ShardCounts, ShardMover, Table
from incidents.incident.create import create_incident
from incidents.incident.queries import my_incidents
from incidents.keys import participant_meta
from incidents.models import State
from incidents.paging import PageRequest
from incidents.requests import CreateIncident
from incidents.store import Caller, Store, new_id
from incidents.table import TABLE_SCHEMA

pytestmark = pytest.mark.integration
INCIDENTS = 12
GSI1 = IndexSchema("GSI1", "GSI1PK", "GSI1SK")
OPERATOR = GrowthPolicy(max_count=64, cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0)


def test_my_incidents_walked_while_the_participants_count_is_halved(store: Store) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    key = participant_meta(caller.account_id, caller.user_id)
    operator = ShardCounts(Table(store.client, store.table_name, TABLE_SCHEMA), policy=OPERATOR)
    for _ in range(2):  # an operator's growth: 1 -> 2 -> 4
        operator.grow(key, operator.refresh(key))
    fresh = dataclasses.replace(store, counts=operator)  # no cache between the steps
    made = [create_incident(fresh, caller, CreateIncident(title=f"i{n}")) for n in range(INCIDENTS)]
    first = my_incidents(fresh, caller, State.OPEN, PageRequest(limit=3))
    walked = [incident.id for incident in first.items]
    operator.shrink(key)
    mover = ShardMover(
        operator, Table(store.client, store.table_name, TABLE_SCHEMA), page_size=1, index=GSI1,
        hashed="incident_id", move_after_seconds=0,
    )  # fmt: skip
    cursor, more = first.next_cursor, first.has_more
    while more:
        mover.step(key)
        page = my_incidents(fresh, caller, State.OPEN, PageRequest(limit=3, cursor=cursor))
        walked += [incident.id for incident in page.items]
        cursor, more = page.next_cursor, page.has_more
    while not mover.step(key).settled:
        pass
    newest_first = [summary.summary.id for summary in reversed(made)]
    assert walked == newest_first, "each incident once, newest first, through the move"
    settled = operator.refresh(key)
    assert (settled.shard_count, settled.read_count) == (2, 2)
    after = my_incidents(fresh, caller, State.OPEN, PageRequest(limit=100))
    assert [incident.id for incident in after.items] == newest_first
    assert after.stats is not None
    assert after.stats.streams == 2, "the list reads 2 shards again"
