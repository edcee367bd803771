"""The HTTP oracle of issue 38: ``make dev``'s API, seen only over HTTP, while an account's
open list, summaries and events are grown from 1 to 4 shards and then halved to 2 by the
mover stepping between requests. The open list walked a page at a time (oldest first, from
a cursor made before the halving) lists every open incident once, the ones created during
the walk included; every incident answers its GET by id at the version the test expects
after every step; the account's events are all listed once afterwards."""

from __future__ import annotations

import time
from typing import Any

import pytest

from dynashard import GrowthPolicy, ShardMover, Table
from dynashard.resharding import Pace
from incidents.keys import ShardConfig
from incidents.table import TABLE_SCHEMA
from incidents.tenant_shards import OPERATOR, Family, build_tenant_shards
from local.engines.clients import local_client
from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration
FAMILIES = (Family.OPEN, Family.SUMMARIES, Family.EVENTS)
UNHURRIED = Pace(10_000)
"""This test is about exactness, not pace (`packages/dynashard/tests/test_mover_pace.py`): the
default 100 write units a second would make the account's events take most of the wait."""
SERVERS_VIEW_SECONDS = GrowthPolicy().cache_seconds + 3
"""How long make dev's servers may act on a map they read: their cache, and a request
(each answers within a second here). The test's movers start moving after it, where a
deployed stage's wait for its 29 s requests (`MOVE_AFTER_SECONDS`) would only slow it."""
SETTLE_WAIT_SECONDS = 30
EVENTS_LIST = "/events?limit=5"


class Oracle:
    """What the test did over HTTP, and the checks against what the API answers."""

    def __init__(self, api: LocalApi) -> None:
        self.api, self.token = api, api.token(1, 0)
        self.versions: dict[str, int] = {}

    def create(self, title: str) -> None:
        status, body = self.api.request("POST", "/incidents", self.token, {"title": title})
        assert status == 201, body
        self.versions[body["summary"]["id"]] = body["summary"]["version"]

    def change(self, incident_id: str) -> None:
        severity = "SEV1" if self.versions[incident_id] % 2 else "SEV2"
        path = f"/incidents/{incident_id}"
        status, body = self.api.request("PATCH", path, self.token, {"severity": severity})
        assert status == 200, body
        self.versions[incident_id] = body["version"]

    def check_reads(self) -> None:
        for incident_id, version in self.versions.items():
            status, body = self.api.request("GET", f"/incidents/{incident_id}", self.token)
            assert status == 200, (incident_id, body)  # never a 404 while it moves
            assert body["summary"]["version"] == version, "the latest, never a stale copy"

    def page(self, path: str, cursor: str | None) -> dict[str, Any]:
        query = f"&cursor={cursor}" if cursor else ""
        status, body = self.api.request("GET", path + query, self.token)
        assert status == 200, body
        return dict(body)

    def walk(self, path: str) -> list[str]:
        seen, cursor = [], None
        while True:
            body = self.page(path, cursor)
            seen += [item["id"] for item in body["items"]]
            if not body["has_more"]:
                return seen
            cursor = body["next_cursor"]


class PagedWalk:
    """A list walked a page at a time from its first page."""

    def __init__(self, oracle: Oracle, path: str) -> None:
        self.oracle, self.path = oracle, path
        self.seen: list[str] = []
        self.cursor: str | None = None
        self.step(first=True)

    def step(self, *, first: bool = False) -> None:
        if first or self.cursor:
            body = self.oracle.page(self.path, self.cursor)
            self.seen += [item["id"] for item in body["items"]]
            self.cursor = body["next_cursor"] if body["has_more"] else None

    def finish(self) -> list[str]:
        while self.cursor:
            self.step()
        return self.seen


def test_an_accounts_counts_change_while_it_is_used_over_http(
    local_api: LocalApi, dynamodb_endpoint: str
) -> None:
    oracle = Oracle(local_api)
    account = local_api.accounts[1]["account_id"]
    client = local_client(dynamodb_endpoint)
    shards = build_tenant_shards(
        Table(client, local_api.table, TABLE_SCHEMA), ShardConfig(), policy=OPERATOR
    )
    for family in FAMILIES:
        counts, key = shards.counts(family), family.meta_key(account)
        for _ in range(2):
            counts.grow(key, counts.refresh(key))
    for n in range(6):
        oracle.create(f"while sharded {n}")
    open_list = "/incidents?state=OPEN&order=asc&limit=4"
    first = oracle.page(open_list, None)
    walked, cursor = [item["id"] for item in first["items"]], first["next_cursor"]
    events_before = oracle.walk(EVENTS_LIST)
    events = PagedWalk(oracle, EVENTS_LIST)  # newest first: what is older is all there now
    movers = []
    for family in FAMILIES:
        spec, key = family.move_spec(), family.meta_key(account)
        shards.counts(family).shrink(key, spec)
        movers.append((key, ShardMover(
            shards.counts(family), Table(client, local_api.table, TABLE_SCHEMA),
            spec.version_attribute, 2, index=spec.index, hashed=spec.hashed, pace=UNHURRIED,
            move_after_seconds=SERVERS_VIEW_SECONDS,
        )))  # fmt: skip
    movable = time.monotonic() + SERVERS_VIEW_SECONDS
    while time.monotonic() < movable:  # writers may still hold the old count: they write on
        oracle.create("before the move")
        oracle.change(sorted(oracle.versions)[len(oracle.versions) % 3])
        oracle.check_reads()
    step = 0
    while cursor:
        for key, mover in movers:
            mover.step(key)
        oracle.create(f"during the walk {step}")
        oracle.change(sorted(oracle.versions)[step % len(oracle.versions)])
        body = oracle.page(open_list, cursor)
        walked += [item["id"] for item in body["items"]]
        cursor = body["next_cursor"] if body["has_more"] else None
        events.step()
        oracle.check_reads()
        step += 1
    events_walked = events.finish()
    assert len(events_walked) == len(set(events_walked)), "no event twice"
    assert set(events_before) <= set(events_walked), "every event older than the walk's start"
    deadline = time.monotonic() + SETTLE_WAIT_SECONDS
    while not all(mover.step(key).settled for key, mover in movers):
        assert time.monotonic() < deadline, "the halvings settle"
        time.sleep(1)
    oracle.check_reads()
    after = oracle.walk(open_list)
    assert len(walked) == len(set(walked)), "no incident twice"
    assert set(walked) == set(after), "every open incident once, those created meanwhile too"
    assert set(oracle.versions) <= set(after)
    listed = oracle.walk("/events?limit=100")
    assert len(listed) == len(set(listed)), "no event twice"
    for family in FAMILIES:
        meta = shards.counts(family).refresh(family.meta_key(account))
        assert (meta.shard_count, meta.read_count, meta.moving_from) == (2, 2, None)
