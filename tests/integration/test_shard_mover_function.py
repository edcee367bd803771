"""The scheduled shard mover (issue 38, point 4), on DynamoDB Local through the API's table:
a participant grown to 4 GSI1 shards is halved to 2 with the move registered; the mover
function, invoked as its schedule would, steps it until it settles, unregisters it, and the
participant's list reads 2 shards and still lists every incident."""

from __future__ import annotations

import pytest

from dynashard import GrowthPolicy, IndexSchema, MoveSpec, ShardCounts, registered_moves
from incidents.keys import participant_meta
from incidents.store import Caller, new_id
from incidents.table import TABLE_SCHEMA
from lambdas import runtime, shard_mover
from local.api_events import LocalLambdaContext
from local.call_log import RUNNING
from tests.api_harness import Api
from tests.deliveries import new_incident
from tests.integration.conftest import API_TABLE

pytestmark = pytest.mark.integration
OPERATOR = GrowthPolicy(max_count=64, cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0)
PARTICIPANTS = MoveSpec(index=IndexSchema("GSI1", "GSI1PK", "GSI1SK"), hashed="incident_id")


def registered() -> list[object]:
    return [move.key for move in registered_moves(runtime.dynamodb(), API_TABLE, TABLE_SCHEMA)]


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
    operator = ShardCounts(runtime.dynamodb(), API_TABLE, TABLE_SCHEMA, policy=OPERATOR)
    for _ in range(2):
        operator.grow(key, operator.refresh(key))
    created = [new_incident(api, alice, f"incident {n}") for n in range(8)]
    operator.shrink(key, PARTICIPANTS)
    assert key in [
        move.key for move in registered_moves(runtime.dynamodb(), API_TABLE, TABLE_SCHEMA)
    ]

    assert run_the_function() == {"running": 1}, "moved, but too young to settle"
    assert key in registered()
    moved = operator.refresh(key)
    assert (moved.shard_count, moved.read_count, moved.moving_from) == (2, 4, 4)
    monkeypatch.setattr(shard_mover, "SETTLE_AFTER", 0.0)  # as if run 15 s later
    assert run_the_function() == {"running": 0}
    assert key not in registered(), "settled: unregistered"
    settled = operator.refresh(key)
    assert (settled.shard_count, settled.read_count, settled.moving_from) == (2, 2, None)
    listed = api.call("my_incidents", alice, query={"state": ["OPEN"], "limit": ["100"]})
    assert listed.status == 200, listed.body
    assert {item["id"] for item in listed.body["items"]} == set(created)
