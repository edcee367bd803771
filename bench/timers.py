"""The timers' sweep at scale: a minute of heartbeats coming due, fired once each.

Reproduce: ``make bench`` (or ``python -m bench.timers``; ``TIMERS=100000`` for the
issue's scale, 10,000 by default so the bench takes a few minutes). On DynamoDB Local,
`TIMERS` heartbeat expiries of `ACCOUNTS` accounts come due spread over one minute (every
heartbeat at a minute's interval, none pinged), written as their pings write them (the
timer's item and its GSI3 entry, 16 shards a minute). One sweep at the minute's end fires
them all, each by its claim alone (a conditional delete: what firing costs before what the
timer's kind does), then a second sweep must fire none. Measured: the sweep's Queries, items
read and read units against the floor (one Query a shard, every due timer read once, units
by DynamoDB's rules), its time per 1,000 due timers (claims one after another), the
lateness of each timer (sweep time minus due time), and, from the table, that no timer is
left and none fired twice.
"""

from __future__ import annotations

import os
import statistics
import time
from datetime import UTC, datetime, timedelta

from bench.support.report import recording_tables, save
from dynashard.query import Item, query_read_units
from incidents.errors import DomainError
from incidents.keys import schedule_meta
from incidents.store import Store, build_store
from incidents.table import TABLE_SCHEMA
from incidents.timers.schedule import Timer, TimerKind, claim, set_timer
from incidents.timers.sweep import sweep
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

TIMERS = int(os.environ.get("TIMERS", "10000"))
ACCOUNTS = 50
T0 = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
TABLE = "bench-timers"


class MovedError(DomainError):
    """The claim failed: fired or moved already."""


def claim_only(store: Store, timer: Timer) -> bool:
    """Fire a timer by its claim alone; False if it was fired already."""
    try:
        store.transact([claim(store, timer)], [MovedError("fired already")])
    except MovedError:
        return False
    return True


def write_timers(store: Store) -> dict[str, list[Item]]:
    """`TIMERS` timers due over the minute after `T0`, 25 a batch; the items by shard."""
    shards: dict[str, list[Item]] = {}
    batch = []
    for n in range(TIMERS):
        due = T0 + timedelta(seconds=60 * n / TIMERS)
        timer = Timer(f"acct_bench{n % ACCOUNTS:03d}", TimerKind.HEARTBEAT, f"beat-{n:06d}", due)
        item = set_timer(store, timer).request["Put"]["Item"]
        shards.setdefault(item["GSI3PK"]["S"], []).append(item)
        batch.append({"PutRequest": {"Item": item}})
        if len(batch) == 25 or n == TIMERS - 1:
            pending = {TABLE: batch}
            while pending:
                answer = store.client.batch_write_item(RequestItems=pending)  # type: ignore[arg-type]
                pending = answer.get("UnprocessedItems") or {}  # type: ignore[assignment]
            batch = []
    return shards


def left(store: Store) -> int:
    """Timer items still in the table (a full scan: the bench's own check)."""
    pages = store.client.get_paginator("scan").paginate(
        TableName=TABLE,
        FilterExpression="#type = :timer",
        ExpressionAttributeNames={"#type": "Type"},
        ExpressionAttributeValues={":timer": {"S": "timer"}},
        Select="COUNT",
    )
    return sum(page["Count"] for page in pages)


def main() -> None:
    """Measure on a fresh DynamoDB Local; print the table; save the JSON."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, TABLE)
        store = build_store(client, TABLE, b"bench-timers-cursor-secret-32byte")
        store.clock = lambda: T0
        sweep(store, T0, {TimerKind.HEARTBEAT: claim_only})  # the schedule's marker
        written = write_timers(store)
        shards = store.due.get(schedule_meta()).read_count
        started = time.perf_counter()
        first = sweep(store, T0 + timedelta(minutes=1), {TimerKind.HEARTBEAT: claim_only})
        seconds = time.perf_counter() - started
        second = sweep(
            store, T0 + timedelta(minutes=1, seconds=30), {TimerKind.HEARTBEAT: claim_only}
        )
        remaining = left(store)
    floor_units = sum(query_read_units(items, consistent=False) for items in written.values())
    late = sorted(first.late_seconds)
    figures = {
        "timers": TIMERS,
        "shards": shards,
        "fired": first.fired,
        "fired_again": second.fired,
        "left": remaining,
        "requests": first.requests,
        "floor_requests": len(written),
        "read_units": first.read_units,
        "floor_read_units": floor_units,
        "write_units_per_timer": 2.0 + 1.0,
        "seconds": seconds,
        "seconds_per_1000": seconds / TIMERS * 1000,
        "late_p50_s": statistics.median(late),
        "late_p99_s": late[int(len(late) * 0.99) - 1],
    }
    print(
        f"{TIMERS:,} heartbeat expiries due over one minute, {ACCOUNTS} accounts, one sweep "
        f"at its end on {engine.description} ({shards} shards a minute)\n"
    )
    print("| figure | measured | floor | x floor |")
    print("|---|---:|---:|---:|")
    print(
        f"| Queries | {first.requests:,} | {len(written):,} |"
        f" {first.requests / len(written):.2f}x |"
    )
    print(
        f"| read units | {first.read_units:,.1f} | {floor_units:,.1f} |"
        f" {first.read_units / floor_units:.2f}x |"
    )
    print(f"| fired / due | {first.fired:,} | {TIMERS:,} | |")
    print(f"| fired again by the next sweep | {second.fired} | 0 | |")
    print(f"| timers left in the table | {remaining} | 0 | |")
    print(f"| sweep seconds per 1,000 due timers | {figures['seconds_per_1000']:.2f} | | |")
    late_p50, late_p99 = figures["late_p50_s"], figures["late_p99_s"]
    print(f"| lateness p50 / p99 (s) | {late_p50:.1f} / {late_p99:.1f} | | |")
    print(
        "\nThe floor reads each shard of the minute the timers are due in once, by DynamoDB's "
        "rules; the sweep also reads the minutes before until they are two minutes old (GSI3 "
        "is eventually consistent), an empty Query each. Each claim is a transactional delete "
        "of a small item (2 write units) and its GSI3 entry (1), one after another."
    )
    print(f"\nwritten to {save('timers', figures)}")


if __name__ == "__main__":
    with recording_tables():
        main()
