"""The scheduled shard maintenance (issue 38, points 2 and 4), on DynamoDB Local through the
API's table: a participant grown to 4 GSI1 shards is halved to 2 with the move registered;
the function, invoked as its schedule would, steps it until it settles, unregisters it, and
the participant's list reads 2 shards and still lists every incident. An account whose
families grew two hours ago and then went quiet is halved by the function itself; one that
took more items in the last hour than the halved count should hold is left as it is."""

from __future__ import annotations

import time

import pytest

from dynashard import GrowthPolicy, IndexSchema, ShardCounts, Table
from dynashard.resharding import ColdPolicy, MoveSpec, registered_moves
from incidents.keys import participant_meta
from incidents.store import Caller, new_id
from incidents.table import TABLE_SCHEMA
from incidents.tenant_shards import Family
from lambdas import runtime, shard_mover
from local.api.call_log import RUNNING
from local.api.proxy_events import LocalLambdaContext
from tests.helpers.api_harness import Api
from tests.helpers.deliveries import new_incident
from tests.integration.conftest import API_TABLE

pytestmark = pytest.mark.integration
OPERATOR = GrowthPolicy(max_count=64, cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0)
PARTICIPANTS = MoveSpec(index=IndexSchema("GSI1", "GSI1PK", "GSI1SK"), hashed="incident_id")


def registered() -> list[object]:
    return [
        move.key for move in registered_moves(Table(runtime.dynamodb(), API_TABLE, TABLE_SCHEMA))
    ]


def run_the_function() -> dict[str, int]:
    token = RUNNING.set("shard-mover")
    try:
        answer: dict[str, int] = shard_mover.handler({}, LocalLambdaContext(timeout_seconds=300))
        return answer
    finally:
        RUNNING.reset(token)


def test_the_scheduled_mover_settles_a_registered_halving(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = Caller(new_id("acct"), new_id("user"))
    key = participant_meta(alice.account_id, alice.user_id)
    operator = ShardCounts(Table(runtime.dynamodb(), API_TABLE, TABLE_SCHEMA), policy=OPERATOR)
    for _ in range(2):
        operator.grow(key, operator.refresh(key))
    created = [new_incident(api, alice, f"incident {n}") for n in range(8)]
    operator.shrink(key, PARTICIPANTS)
    assert key in [
        move.key for move in registered_moves(Table(runtime.dynamodb(), API_TABLE, TABLE_SCHEMA))
    ]

    run_the_function()  # the table's other accounts may be halved too: this one's state tells
    assert key in registered(), "too young to move"
    moved = operator.refresh(key)
    assert (moved.shard_count, moved.read_count, moved.moving_from) == (2, 4, 4)
    monkeypatch.setattr(shard_mover, "MOVE_AFTER", 0.0)  # as if run a minute later
    run_the_function()
    assert key not in registered(), "settled: unregistered"
    settled = operator.refresh(key)
    assert (settled.shard_count, settled.read_count, settled.moving_from) == (2, 2, None)
    listed = api.call("my_incidents", alice, query={"state": ["OPEN"], "limit": ["100"]})
    assert listed.status == 200, listed.body
    assert {item["id"] for item in listed.body["items"]} == set(created)


def grown_two_hours_ago(account: str) -> None:
    """The account's families doubled twice, two hours ago (a burst long over)."""
    then = ShardCounts(
        Table(runtime.dynamodb(), API_TABLE, TABLE_SCHEMA), policy=OPERATOR,
        clock=lambda: time.time() - 7200,
    )  # fmt: skip
    for family in Family:
        key = family.meta_key(account)
        for _ in range(2):
            then.grow(key, then.refresh(key))


def counts_of(account: str) -> dict[Family, int]:
    operator = ShardCounts(Table(runtime.dynamodb(), API_TABLE, TABLE_SCHEMA), policy=OPERATOR)
    return {family: operator.refresh(family.meta_key(account)).shard_count for family in Family}


def test_the_function_halves_a_quiet_cold_account_and_leaves_a_busy_one(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold, busy = (Caller(new_id("acct"), new_id("user")) for _ in range(2))
    made = {who: [new_incident(api, who, "first")] for who in (cold, busy)}
    for who, more in ((cold, 4), (busy, 8)):
        grown_two_hours_ago(who.account_id)
        made[who] += [new_incident(api, who, f"incident {n}") for n in range(more)]
    assert counts_of(busy.account_id) == dict.fromkeys(Family, 4), "grown: 1 -> 4"
    # 3 items a shard: the 2 shards left after halving hold 6 of the last hour's items.
    # cold took 5 incidents (5 summaries, 5 open, 5 events) in the hour; busy 9.
    monkeypatch.setattr(shard_mover, "COLD", ColdPolicy(items_per_shard=3))
    first = run_the_function()
    assert first["halved"] >= len(Family) - 1, first  # CLOSED holds nothing: cold too
    halved = counts_of(cold.account_id)
    assert halved == dict.fromkeys(Family, 2), halved
    assert counts_of(busy.account_id) == {**dict.fromkeys(Family, 4), Family.CLOSED: 2}
    monkeypatch.setattr(shard_mover, "MOVE_AFTER", 0.0)
    while run_the_function()["running"]:
        pass
    for who in (cold, busy):
        listed = api.call("account_incidents", who, query={"state": ["OPEN"], "limit": ["100"]})
        assert listed.status == 200, listed.body
        assert {item["id"] for item in listed.body["items"]} == set(made[who])
        for incident_id in made[who]:
            assert api.call("get_incident", who, path={"incident_id": incident_id}).status == 200
    assert counts_of(cold.account_id) == dict.fromkeys(Family, 2), "settled, not halved again"
