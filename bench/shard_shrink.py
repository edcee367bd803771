"""An account grown from 1 to 64 shards by an injected throttling storm, then halved back to
1 by the mover while a walker pages its open list (issue 38): items moved per second, the
mover's read and write units against the floor, the page's cost before, during and after,
and the walk's gaps, repeats and point-read misses (all must be zero).

The storm: creates whose transactions DynamoDB Local is made to cancel with
``ThrottlingError`` on the summary (as a hot partition would), so the create grows the
account's summaries and open list (cooldown 0 for the bench). Then `INCIDENTS` incidents
are written at 64 shards, and each family is halved six times, the mover stepping a page
of 100 items a shard between the walker's pages. Units are DynamoDB Local's own
``ConsumedCapacity`` of every mover request (``TOTAL``: indexes included).

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.shard_shrink
"""

from __future__ import annotations

import dataclasses
import random
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import ClientError

from bench.support.consumed import Units
from bench.support.local_store import local_store
from bench.support.report import recording_tables, save
from dynashard import GrowthPolicy, ShardMover, Table
from dynashard.keys import WeightedShards
from dynashard.resharding import Pace
from incidents.errors import NotFoundError
from incidents.incident.commands import get_incident
from incidents.incident.create import create_incident, new_summary
from incidents.incident.queries import account_incidents
from incidents.keys import ShardConfig
from incidents.models import State
from incidents.paging import PageRequest
from incidents.requests import CreateIncident
from incidents.store import Caller, Store
from incidents.table import TABLE_SCHEMA
from incidents.tenant_shards import Family, build_tenant_shards
from local.demo.data import created_items, write_batches
from local.engines.clients import local_client

INCIDENTS = 2_000
PEAK = 64
STAGE = ShardConfig(PEAK, WeightedShards({"OPEN": PEAK, "CLOSED": 32}), 16)
FAST = GrowthPolicy(cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0)
PAGE = 25
MOVER_PAGE = 100
MOVER_UNITS = 800.0
"""The mover's pace for the bench (the stage's default is 100 write units a second: a tenth
of a partition; 800 keeps the bench short and still binds)."""
FLOORS = {Family.SUMMARIES: 2, Family.OPEN: 1}
"""Write requests an item's move needs at least: a summary is copied and deleted; a list
entry is re-pointed by one update (billed as the table's write plus a delete and a put in
GSI2). Its read is its share of a page of the shard (`MOVER_PAGE` items a Query)."""


@contextmanager
def throttled_summaries(store: Store, times: int) -> Iterator[None]:
    """The next `times` create transactions are cancelled: the summary's write throttled."""
    left = [times]

    def cancel(params: dict[str, Any], **_: Any) -> None:
        first = params["TransactItems"][0].get("Put", {}).get("Item", {})
        if left[0] > 0 and first.get("Type") == {"S": "incident"}:  # a create, not a growth
            left[0] -= 1
            reasons: Any = [{"Code": "ThrottlingError"}] + [{"Code": "None"}] * (
                len(params["TransactItems"]) - 1
            )
            raise ClientError(
                {
                    "Error": {"Code": "TransactionCanceledException", "Message": "injected"},
                    "CancellationReasons": reasons,
                },
                "TransactWriteItems",
            )

    events = store.client.meta.events
    events.register("before-parameter-build.dynamodb.TransactWriteItems", cancel)
    try:
        yield
    finally:
        events.unregister("before-parameter-build.dynamodb.TransactWriteItems", cancel)


def page_cost(store: Store, caller: Caller) -> dict[str, float]:
    """The open list's first page: requests, read units, latency."""
    started = time.perf_counter()
    page = account_incidents(store, caller, State.OPEN, PageRequest(limit=PAGE))
    elapsed = (time.perf_counter() - started) * 1000
    assert page.stats is not None
    return {
        "requests": page.stats.requests,
        "read_units": page.stats.consumed_read_units,
        "ms": round(elapsed, 1),
    }


def storm(store: Store, caller: Caller) -> list[int]:
    """Throttled creates until the summaries and the open list reach `PEAK`: the counts."""
    counts = [store.shards.meta(caller.account_id, Family.OPEN).shard_count]
    while counts[-1] < PEAK:
        with throttled_summaries(store, 2):
            create_incident(store, caller, CreateIncident(title="during the storm"))
        counts.append(store.shards.meta(caller.account_id, Family.OPEN).shard_count)
    return counts


def seed(store: Store, caller: Caller) -> list[str]:
    """`INCIDENTS` open incidents, written at the account's counts (the peak): their ids."""
    items, ids = [], []
    for n in range(INCIDENTS):
        at = f"2026-11-{1 + n % 25:02d}T00:00:00.{n:06d}Z"
        summary = new_summary(caller, 100 + n, CreateIncident(title=f"incident {n}"), at)
        items += created_items(store, caller, summary)
        ids.append(summary.id)
    write_batches(store, items)
    return ids


class Walker:
    """Pages the open list oldest first, a page at a time, and counts what it saw."""

    def __init__(self, store: Store, caller: Caller) -> None:
        self.store, self.caller = store, caller
        self.walked: list[str] = []
        self.requests: list[int] = []
        self.cursor: str | None = None
        self.more = True

    def page(self) -> None:
        if not self.more:
            return
        request = PageRequest(limit=PAGE, cursor=self.cursor, descending=False)
        page = account_incidents(self.store, self.caller, State.OPEN, request)
        self.walked += [summary.id for summary in page.items]
        self.cursor, self.more = page.next_cursor, page.has_more
        assert page.stats is not None
        self.requests.append(page.stats.requests)


def shrink(
    store: Store, caller: Caller, family: Family, ids: list[str], endpoint: str
) -> dict[str, Any]:
    """Halve `family` from `PEAK` to 1 while a walker pages the open list and point reads
    sample the incidents; what it cost and what the walker saw."""
    mover_client = local_client(endpoint)  # its own, so its units are its own
    units = Units(mover_client)
    shards = build_tenant_shards(
        Table(mover_client, store.table_name, TABLE_SCHEMA), STAGE, policy=FAST
    )
    counts, key = shards.counts(family), family.meta_key(caller.account_id)
    spec = family.move_spec()
    mover = ShardMover(
        counts, Table(mover_client, store.table_name, TABLE_SCHEMA), spec.version_attribute,
        MOVER_PAGE, index=spec.index, hashed=spec.hashed, move_after_seconds=0,
        pace=Pace(MOVER_UNITS),
    )  # fmt: skip
    walker = Walker(store, caller)
    misses = moved = 0
    rng = random.Random(38)
    started = time.perf_counter()
    moving = 0.0
    while counts.refresh(key).shard_count > 1:
        counts.shrink(key, spec)
        while True:
            step_started = time.perf_counter()
            report = mover.step(key)
            moving += time.perf_counter() - step_started
            moved += report.moved
            walker.page()
            for incident_id in rng.sample(ids, 5):
                try:
                    get_incident(store, caller, incident_id)
                except NotFoundError:
                    misses += 1
            if report.settled:
                break
    during = list(walker.requests)
    while walker.more:
        walker.page()
    walked = walker.walked
    return {
        "moved": moved,
        "seconds": round(time.perf_counter() - started, 1),
        "moving_seconds": round(moving, 1),
        "per_second": round(moved / moving) if moving else 0,
        "write_units_per_second": round(units.write / moving) if moving else 0,
        "read_units_per_item": round(units.read / moved, 2) if moved else 0,
        "write_units_per_item": round(units.write / moved, 2) if moved else 0,
        "writes_per_item": round(units.writes / moved, 2) if moved else 0,
        "floor": FLOORS[family],
        "walk": {
            "pages_during": len(during),
            "p50_requests_during": statistics.median(during) if during else 0,
            "repeats": len(walked) - len(set(walked)),
            "missing": len(set(ids) - set(walked)),
        },
        "point_read_misses": misses,
    }


def main() -> None:
    with local_store("shard-shrink") as (plain, caller, engine):
        store = dataclasses.replace(
            plain,
            config=STAGE,
            shards=build_tenant_shards(plain.table, STAGE, policy=FAST),
        )
        create_incident(store, caller, CreateIncident(title="the first"))
        grown = storm(store, caller)
        ids = seed(store, caller)
        at_peak = page_cost(store, caller)
        results = {"storm": grown, "at_peak": at_peak}
        for family in (Family.OPEN, Family.SUMMARIES):
            results[family.value] = shrink(store, caller, family, ids, engine.endpoint)
        results["after"] = page_cost(store, caller)
        results["engine"] = engine.description
    report(results)


def report(results: dict[str, Any]) -> None:
    storm_counts = " -> ".join(map(str, results["storm"]))
    with recording_tables():
        print(f"An account grown 1 -> {PEAK} shards by a throttling storm ({storm_counts}),")
        print(f"{INCIDENTS} open incidents, halved back to 1 (six halvings) while a walker pages")
        print(f"its open list ({PAGE} a page, oldest first) and point reads sample them.")
        print()
        print(f"The mover's pace: {MOVER_UNITS:.0f} write units a second.")
        print()
        print("| family | moved | items/s | write units/s | read units/item | write units/item "
              "| write requests/item (floor) | repeats | missing | 404s |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for family in (Family.OPEN, Family.SUMMARIES):
            row = results[family.value]
            walk = row["walk"]
            print(
                f"| {family.value} | {row['moved']} | {row['per_second']} "
                f"| {row['write_units_per_second']} "
                f"| {row['read_units_per_item']} | {row['write_units_per_item']} "
                f"| {row['writes_per_item']} ({row['floor']}) "
                f"| {walk['repeats']} | {walk['missing']} "
                f"| {row['point_read_misses']} |"
            )
        print()
        print("| the open list's first page | requests | read units | latency |")
        print("|---|---:|---:|---:|")
        for name in ("at_peak", "after"):
            row = results[name]
            label = name.replace("_", " ")
            print(f"| {label} | {row['requests']} | {row['read_units']} | {row['ms']} ms |")
        during = results[Family.OPEN.value]["walk"]["p50_requests_during"]
        print(f"| during the open list's halvings (p50 of the walker's pages) | {during} | | |")
        print(f"written to {save('shard_shrink', results)}")


if __name__ == "__main__":
    main()
