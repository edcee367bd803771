"""The timers' sweep at the issue's scale: 100,000 heartbeats at a minute's interval and
10,000 open incidents with auto-resolve timers, on one table; each sweep fires what is due,
once, and reads little else.

Reproduce: ``make bench`` (or ``python -m bench.timers``; ``HEARTBEATS`` and ``INCIDENTS``
scale it down). On DynamoDB Local:

- **The index at scale**: every heartbeat's timer and every incident's auto-resolve is in
  GSI3. The heartbeats pinged on time (all but `EXPIRED_SHARE`) have moved their timers to
  the next minute, and most incidents' timers are due later in the hour; those are written
  as their pings and alerts write them (the timer's item and its index entry), 25 a batch.
- **What comes due**: the heartbeats that missed their ping (real heartbeats, expiring
  into real incidents) and the incidents whose alerts stopped (real incidents, opened by
  an integration's alerts, resolved by their timer), in two minutes: the first is swept
  one timer after another (the baseline), the second with the sweep's `WORKERS` at once.
- **Measured, per sweep**: Queries and read units against the floor (one Query a shard of
  each minute read, every due timer read once, by DynamoDB's rules), write units by
  DynamoDB's rules (each transactional item twice), seconds per 1,000 due timers, and the
  lateness of each timer when it fired (the sweep's time plus how long it had been
  running). Checked against the table: every due timer fired once, a later sweep fires
  none, none is left due, and each expiry opened one incident and each auto-resolve
  resolved its incident.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.support.consumed import Units
from bench.support.report import recording_tables, save
from dynashard import shard_keys
from dynashard.query import Item, query_read_units
from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.models import ALERT_EVENTS, NewIntegration
from incidents.heartbeats.commands import create_heartbeat, get_heartbeat
from incidents.heartbeats.models import NewHeartbeat
from incidents.incident.commands import load_summary
from incidents.keys import due_bucket_base, schedule_meta
from incidents.models import Status, timestamp
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.timers import firing
from incidents.timers.firing import FireHere
from incidents.timers.schedule import Timer, TimerKind, set_timer
from incidents.timers.sweep import SweepReport, sweep
from lambdas.timer_worker import HANDLERS
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

HEARTBEATS = int(os.environ.get("HEARTBEATS", "100000"))
INCIDENTS = int(os.environ.get("INCIDENTS", "10000"))
EXPIRED_SHARE = 0.01
"""Heartbeats whose ping is late, and incidents whose alerts stopped, in the swept minutes."""
ACCOUNTS = 50
T0 = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
TABLE = "bench-timers"
WRITERS = 8


@dataclass
class Due:
    """What comes due in one swept minute: heartbeats that expire, incidents that resolve."""

    minute: datetime
    heartbeats: list[tuple[Caller, str]] = field(default_factory=list)
    incidents: list[tuple[Caller, str]] = field(default_factory=list)

    @property
    def timers(self) -> int:
        return len(self.heartbeats) + len(self.incidents)


@dataclass
class Clock:
    """The store's clock: set by the bench, running on while a sweep fires."""

    at: datetime = T0
    since: float | None = None

    def __call__(self) -> datetime:
        if self.since is None:
            return self.at
        return self.at + timedelta(seconds=time.perf_counter() - self.since)


def background(store: Store) -> int:
    """The timers that are not due: pinged heartbeats' (due in the minute after the swept
    ones) and incidents' later in the hour; written as their pings and alerts write them."""
    pinged = HEARTBEATS - int(HEARTBEATS * EXPIRED_SHARE)
    later = INCIDENTS - int(INCIDENTS * EXPIRED_SHARE)

    def timers() -> Iterator[Timer]:
        for n in range(pinged):
            due = T0 + 3 * MINUTE + timedelta(seconds=1 + 58 * n / pinged)
            yield Timer(_account(n), TimerKind.HEARTBEAT, f"beat-{n:06d}", due)
        for n in range(later):
            due = T0 + 4 * MINUTE + timedelta(seconds=3300 * n / later)
            yield Timer(_account(n), TimerKind.AUTO_RESOLVE, new_id("inc"), due)

    items = [set_timer(store, timer).request["Put"]["Item"] for timer in timers()]
    batches = [items[start : start + 25] for start in range(0, len(items), 25)]
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(lambda batch: _write(store, batch), batches))
    return len(items)


def _write(store: Store, batch: list[Item]) -> None:
    pending: Any = {TABLE: [{"PutRequest": {"Item": item}} for item in batch]}
    while pending:
        pending = store.client.batch_write_item(RequestItems=pending).get("UnprocessedItems")


def _account(n: int) -> str:
    return f"acct_bench{n % ACCOUNTS:03d}"


def coming_due(store: Store, clock: Clock, minute: datetime, share: int) -> Due:
    """Real heartbeats and incidents whose timers come due over `minute`: heartbeats made a
    minute before (interval 1 minute, never pinged), incidents opened by alerts a minute
    before (``auto_resolve_timeout`` 60 s)."""
    due = Due(minute)
    owners = [Caller(_account(n), new_id("user")) for n in range(ACCOUNTS)]
    integrations = [
        create_integration(store, owner, NewIntegration(name="cron", auto_resolve_timeout=60))
        for owner in owners
    ]
    for n in range(share):
        clock.at = minute - MINUTE + timedelta(seconds=1 + 58 * n / share)
        owner, integration = owners[n % ACCOUNTS], integrations[n % ACCOUNTS]
        name = f"due-{minute:%H%M}-{n:05d}"
        beat = {"name": name, "interval": 1, "integration_id": integration.id}
        create_heartbeat(store, owner, NewHeartbeat.model_validate(beat))
        due.heartbeats.append((owner, name))
        alert = ALERT_EVENTS.validate_python(
            {"event_action": "trigger", "dedup_key": name,
             "payload": {"summary": "queue backed up", "source": name, "severity": "error"}}
        )  # fmt: skip
        caller, found = authenticate(store, integration.key)
        opened = ingest_alert(store, caller, found, alert).incident_id
        assert opened is not None
        due.incidents.append((owner, opened))
    return due


def floor_units(store: Store, minutes: list[datetime], now: datetime) -> tuple[int, float]:
    """The floor of reading `minutes`' buckets to `now`: one Query a shard, every item due
    read once, by DynamoDB's rules (eventually consistent)."""
    count = store.due.get(schedule_meta()).read_count
    queries, units = 0, 0.0
    for minute in minutes:
        for key in shard_keys(due_bucket_base(f"{minute:%Y%m%d%H%M}"), count):
            items = store.client.query(
                TableName=TABLE,
                IndexName="GSI3",
                KeyConditionExpression="GSI3PK = :pk AND GSI3SK < :due",
                ExpressionAttributeValues={":pk": {"S": key}, ":due": {"S": f"{timestamp(now)}$"}},
            )["Items"]
            queries += 1
            units += query_read_units(items, consistent=False)
    return queries, units


def swept(store: Store, clock: Clock, due: Due, workers: int, units: Units) -> dict[str, Any]:
    """Sweep at the end of `due`'s minute with `workers` at once; what it cost."""
    now = due.minute + MINUTE
    read_minutes = [now - 2 * MINUTE + n * MINUTE for n in range(3)]  # the settling ones too
    floor_queries, floor_read = floor_units(store, read_minutes, now)
    firing.WORKERS = workers
    before = (units.read, units.billed_small_writes(), units.requests)
    clock.at, clock.since = now, time.perf_counter()
    started = time.perf_counter()
    report: SweepReport = sweep(store, now, FireHere(HANDLERS))
    seconds = time.perf_counter() - started
    clock.since = None
    late = sorted(report.late_seconds)
    return {
        "workers": workers,
        "due": due.timers,
        "fired": report.fired,
        "lost": report.lost,
        "failed": report.failed,
        "queries": report.requests,
        "floor_queries": floor_queries,
        "read_units": report.read_units,
        "floor_read_units": floor_read,
        "read_units_all": units.read - before[0],
        "write_units": units.billed_small_writes() - before[1],
        "requests": units.requests - before[2],
        "seconds": seconds,
        "seconds_per_1000": seconds / max(1, report.fired) * 1000,
        "late_p50_s": statistics.median(late) if late else 0.0,
        "late_p99_s": late[max(0, int(len(late) * 0.99) - 1)] if late else 0.0,
    }


def checked(store: Store, due: Due) -> dict[str, int]:
    """From the table: each expiry opened one incident, each auto-resolve resolved its
    incident."""
    expired = sum(
        get_heartbeat(store, owner, name).incident_id is not None for owner, name in due.heartbeats
    )
    resolved = sum(
        load_summary(store, owner, incident).status is Status.RESOLVED
        for owner, incident in due.incidents
    )
    return {"heartbeats_expired": expired, "incidents_resolved": resolved}


def left_due(store: Store, now: datetime) -> int:
    """Timer items due by `now` still in the table (a scan: the bench's own check)."""
    pages = store.client.get_paginator("scan").paginate(
        TableName=TABLE,
        FilterExpression="#type = :timer AND due_at <= :now",
        ExpressionAttributeNames={"#type": "Type"},
        ExpressionAttributeValues={":timer": {"S": "timer"}, ":now": {"S": timestamp(now)}},
        Select="COUNT",
    )
    return sum(page["Count"] for page in pages)


def main() -> None:
    """Measure on a fresh DynamoDB Local; print the tables; save the JSON."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=32)
        create_table(client, TABLE_SCHEMA, TABLE)
        store = build_store(client, TABLE, b"bench-timers-cursor-secret-32byte")
        clock = Clock()
        store.clock = clock
        sweep(store, T0, FireHere(HANDLERS))  # the schedule's marker
        started = time.perf_counter()
        written = background(store)
        share = int(HEARTBEATS * EXPIRED_SHARE), int(INCIDENTS * EXPIRED_SHARE)
        first = coming_due(store, clock, T0 + MINUTE, share[0] // 2)
        second = coming_due(store, clock, T0 + 2 * MINUTE, share[0] - share[0] // 2)
        setup = time.perf_counter() - started
        # the run before: each now reads three minutes
        sweep(store, T0 + MINUTE, FireHere(HANDLERS))
        units = Units(client)
        runs = [swept(store, clock, first, 1, units), swept(store, clock, second, 8, units)]
        clock.at = T0 + 3 * MINUTE
        again = sweep(store, clock.at, FireHere(HANDLERS))
        remaining = left_due(store, clock.at)
        outcomes = [checked(store, first), checked(store, second)]
    in_index = written + first.timers + second.timers
    figures = {
        "heartbeats": HEARTBEATS,
        "incidents": INCIDENTS,
        "timers_in_index": in_index,
        "setup_seconds": setup,
        "sweeps": runs,
        "fired_again": again.fired,
        "left_due": remaining,
        "outcomes": outcomes,
    }
    print(
        f"{HEARTBEATS:,} heartbeats at a 1-minute interval and {INCIDENTS:,} incidents with "
        f"auto-resolve timers ({in_index:,} timers in the index), {EXPIRED_SHARE:.0%} of each "
        f"due in each of two swept minutes, {ACCOUNTS} accounts, on {engine.description}\n"
    )
    print(
        "| sweep | due | fired | Queries (floor) | read units (floor, x) | write units / timer "
        "| s / 1,000 due | vs one at a time | lateness p50 / p99 (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = runs[0]["seconds_per_1000"]
    for run in runs:
        name = "one at a time" if run["workers"] == 1 else f"{run['workers']} at once"
        ratio = run["read_units"] / run["floor_read_units"]
        print(
            f"| {name} | {run['due']:,} | {run['fired']:,} | {run['queries']} "
            f"({run['floor_queries']}) | {run['read_units']:.1f} ({run['floor_read_units']:.1f}, "
            f"{ratio:.2f}x) | {run['write_units'] / max(1, run['fired']):.1f} "
            f"| {run['seconds_per_1000']:.2f} | {run['seconds_per_1000'] / base:.2f}x "
            f"| {run['late_p50_s']:.1f} / {run['late_p99_s']:.1f} |"
        )  # fmt: skip
    print(
        f"\nChecked against the table: a sweep after both fired {again.fired}; timers due "
        f"and left: {remaining}; expiries that opened their incident and incidents resolved: "
        + ", ".join(
            f"{o['heartbeats_expired']:,} and {o['incidents_resolved']:,}" for o in outcomes
        )
        + "."
    )
    print(
        "The read floor is one Query a shard of each minute the sweep reads (the due one and "
        "the two settling before it) and every due timer read once; the sweep's own reads of "
        "what firing does (the heartbeat, the incident) are in its write-side work, not the "
        "floor. Write units are DynamoDB's (each item of a transaction twice): an expiry "
        "opens an incident, an auto-resolve resolves one, each with its claim."
    )
    print(f"\nwritten to {save('timers', figures)}")


if __name__ == "__main__":
    with recording_tables():
        main()
