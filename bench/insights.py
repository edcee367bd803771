"""What insights cost: the write each timeline event adds on the publisher's path, and the
read of a 90-day range, against their floors, on DynamoDB Local in one run.

Workload: one account, 90 days of incidents on a simulated clock (`PER_DAY` a day over
five severities, half with one of two teams): each gets a note, most are acknowledged,
all are resolved. Every event then goes through the publisher (bus and queue recorded in
process), and ``GET /insights/incidents``'s query reads the 90 days.

- Writes: units by DynamoDB's rules (a transaction's item twice), per event without a
  figure (a note: the position's move alone, what publishing cost before insights) and per
  event with one; the floor of a figure is the position and each aggregate it touches,
  written once in a transaction.
- Reads: the range's read units and requests, against the floor (one Query a shard, the
  items' bytes in 4 KB units, eventually consistent), and against listing the same
  incidents (the account's resolved list over the same days), the read insights spare.

Reproduce: ``python -m bench.insights``.
"""

from __future__ import annotations

import math
import random
import time
from datetime import UTC, datetime, timedelta

from bench.support.consumed import Units
from bench.support.local_store import local_store
from bench.support.report import recording_tables, save
from dynashard.query.capacity import item_size, query_read_units
from incidents.events_out.outbox import BatchReads, Outgoing, Publisher, outgoing_from_item
from incidents.incident.commands import add_note, update_incident
from incidents.incident.create import create_incident
from incidents.incident.queries import account_incidents
from incidents.insights.aggregates import ALL_TEAMS, SHARDS, partition
from incidents.insights.queries import InsightRequest, incident_insights
from incidents.keys import event_key, timeline_prefix
from incidents.models import Severity, State, Status
from incidents.paging import MAX_LIMIT, CreatedWindow, PageRequest
from incidents.requests import AddNote, CreateIncident, CreateTeam, UpdateIncident
from incidents.store import Caller, Store
from incidents.team_commands import create_team
from incidents.timeline.queries import stored_events

DAYS = 90
PER_DAY = 8
START = datetime(2027, 1, 1, tzinfo=UTC)
TABLE = "insights-cost"


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def live(store: Store, caller: Caller, clock: Clock, teams: list[str]) -> list[str]:
    """`PER_DAY` incidents a day for `DAYS` days; their ids."""
    rng = random.Random(53)
    made: list[str] = []
    for day in range(DAYS):
        for n in range(PER_DAY):
            clock.now = START + timedelta(days=day, minutes=30 * n)
            chosen = [rng.choice(teams)] if n % 2 else []
            severity = list(Severity)[n % len(Severity)]
            request = CreateIncident(title=f"incident {day}.{n}", severity=severity, teams=chosen)
            incident = create_incident(store, caller, request).summary.id
            add_note(store, caller, incident, AddNote(text="looking"))
            if rng.random() < 0.9:
                clock.now += timedelta(seconds=rng.expovariate(1 / 300))
                update_incident(store, caller, incident, UpdateIncident(status=Status.ACKNOWLEDGED))
            clock.now += timedelta(seconds=rng.expovariate(1 / 3600))
            update_incident(store, caller, incident, UpdateIncident(status=Status.RESOLVED))
            made.append(incident)
    return made


def events_of(store: Store, account: str, incidents: list[str]) -> list[Outgoing]:
    return [
        outgoing_from_item(item)
        for incident in incidents
        for item in stored_events(store, account, incident, 1)
    ]


class Outlets:
    """The bus and the delivery queue, accepting everything in process."""

    def send(self, messages: object) -> None:
        return None

    def put_events(self, Entries: list[object]) -> dict[str, int]:  # noqa: N803
        return {"FailedEntryCount": 0}


def publish(store: Store, events: list[Outgoing], units: Units) -> dict[str, dict[str, float]]:
    """Each event through the publisher, its write units by DynamoDB's rules, by kind."""
    publisher = Publisher(store, Outlets(), Outlets(), "bench")  # type: ignore[arg-type]
    batch = BatchReads()
    totals: dict[str, dict[str, float]] = {}
    for event in events:
        before = (units.billed_small_writes(), units.requests)
        figures = publisher.publish(event, batch)
        kind = "with a figure" if figures else "without (a note)"
        row = totals.setdefault(kind, {"events": 0, "units": 0.0, "requests": 0, "floor": 0.0})
        row["events"] += 1
        row["units"] += units.billed_small_writes() - before[0]
        row["requests"] += units.requests - before[1]
        row["floor"] += 2 * (1 + sum(1 + len(f.teams) for f in figures)) if figures else 1
    return totals


def read_range(store: Store, caller: Caller, units: Units) -> dict[str, float]:
    """The 90 days by day, their cost and floor, and the time it took."""
    request = InsightRequest(START.date(), START.date() + timedelta(days=DAYS - 1))
    before = (units.read, units.requests)
    started = time.perf_counter()
    answer = incident_insights(store, caller, request)
    took = (time.perf_counter() - started) * 1000
    spent = {"read_units": units.read - before[0], "requests": units.requests - before[1]}
    floor = 0.0
    for shard in range(SHARDS):
        items = store.query_partition(partition(caller.account_id, ALL_TEAMS, shard))
        floor += query_read_units(items, consistent=False)
    return {
        **spent,
        "floor_units": floor,
        "floor_requests": SHARDS,
        "milliseconds": round(took, 1),
        "incidents": sum(row.total_incident_count for row in answer.items),
        "rows": len(answer.items),
    }


def largest_aggregate(store: Store, account: str, teams: list[str]) -> int:
    """Bytes of the largest aggregate, by DynamoDB's rules: what each write is billed by."""
    return max(
        item_size(item)
        for team in (ALL_TEAMS, *teams)
        for shard in range(SHARDS)
        for item in store.query_partition(partition(account, team, shard))
    )


def read_timelines(store: Store, account: str, incidents: list[str], units: Units) -> float:
    """Read units of every incident's timeline: what the figures are computed from."""
    before = units.read
    for incident in incidents:
        pages = store.client.get_paginator("query").paginate(
            TableName=store.table_name,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :events)",
            ExpressionAttributeValues={
                ":pk": {"S": event_key(account, incident, 1)[0]},
                ":events": {"S": timeline_prefix()},
            },
        )
        for _ in pages:
            pass
    return units.read - before


def list_range(store: Store, caller: Caller, units: Units) -> dict[str, float]:
    """The same incidents listed (the account's resolved list over the 90 days)."""
    window = CreatedWindow(START, START + timedelta(days=DAYS))
    before = (units.read, units.requests)
    cursor: str | None = None
    listed = 0
    while True:
        page = account_incidents(
            store, caller, State.CLOSED, PageRequest(MAX_LIMIT, cursor, window=window)
        )
        listed += len(page.items)
        if not page.has_more:
            break
        cursor = page.next_cursor
    return {"read_units": units.read - before[0], "requests": units.requests - before[1],
            "incidents": listed}  # fmt: skip


def main() -> None:
    with local_store(TABLE) as (store, caller, engine):
        clock = Clock()
        store.clock = clock
        teams = [create_team(store, caller, CreateTeam(name=n)).id for n in ("Payments", "Search")]
        incidents = live(store, caller, clock, teams)
        events = events_of(store, caller.account_id, incidents)
        units = Units(store.client)
        writes = publish(store, events, units)
        reads = read_range(store, caller, units)
        listing = list_range(store, caller, units)
        listing["timeline_units"] = read_timelines(store, caller.account_id, incidents, units)
        writes["largest aggregate"] = {"bytes": largest_aggregate(store, caller.account_id, teams)}
    report(writes, reads, listing, engine.description, len(incidents))


def report(
    writes: dict[str, dict[str, float]],
    reads: dict[str, float],
    listing: dict[str, float],
    engine: str,
    incidents: int,
) -> None:
    largest = writes.pop("largest aggregate")["bytes"]
    plain = writes["without (a note)"]
    baseline = plain["units"] / plain["events"]
    with recording_tables():
        print(f"Insights' write on the publisher's path, {incidents} incidents over {DAYS} "
              f"days, {engine}:")  # fmt: skip
        print()
        print("| event | events | write units / event (floor) | requests / event | vs a note |")
        print("|---|---:|---:|---:|---:|")
        for kind, row in writes.items():
            per, floor = row["units"] / row["events"], row["floor"] / row["events"]
            print(f"| {kind} | {row['events']:.0f} | {per:.2f} ({floor:.2f}) "
                  f"| {row['requests'] / row['events']:.2f} | {per / baseline:.2f}x |")  # fmt: skip
        print()
        units = math.ceil(largest / 1024)
        print(f"The largest aggregate holds {largest:.0f} bytes: each of its writes is {units} "
              "unit (twice in a transaction).")  # fmt: skip
        print()
        print(f"A {DAYS}-day read of the account's insights, against its floor, against "
              "listing the same incidents and against reading their timelines:")  # fmt: skip
        print()
        print("| read | read units | requests | rows | vs listing |")
        print("|---|---:|---:|---:|---:|")
        print(f"| insights, {DAYS} days by day | {reads['read_units']:.1f} "
              f"(floor {reads['floor_units']:.1f}) | {reads['requests']:.0f} "
              f"(floor {reads['floor_requests']:.0f}) | {reads['rows']:.0f} "
              f"| {reads['read_units'] / listing['read_units']:.3f}x |")  # fmt: skip
        print(f"| the resolved list, same days | {listing['read_units']:.1f} "
              f"| {listing['requests']:.0f} | {listing['incidents']:.0f} incidents "
              "| 1.000x |")  # fmt: skip
        timelines = listing["timeline_units"]
        print(f"| every timeline, same incidents | {timelines:.1f} | {incidents} "
              f"| {incidents} incidents | {timelines / listing['read_units']:.3f}x |")  # fmt: skip
        print()
        print(f"The read counted {reads['incidents']:.0f} incidents in {reads['milliseconds']} ms.")
        results = {
            "writes": writes,
            "largest_aggregate_bytes": largest,
            "reads": reads,
            "listing": listing,
            "incidents": incidents,
        }
        print(f"written to {save('insights', results)}")


if __name__ == "__main__":
    main()
