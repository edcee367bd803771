"""What reading events costs: a timeline page and a ``GET /events`` page, against the
one-wave oracle.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m
bench.timeline_reads``). On AWS DynamoDB Local, one account gets `INCIDENTS` incidents
through the real commands, each with `NOTES` notes and a resolve (so `/events` merges 16
shards of a busy account), and one incident a long timeline of `LONG` events. Each list is
walked for `PAGES` pages at limits 25 and 100 with the handlers' own budget. The oracle is
`bench.fanout`'s: one request per stream that supplied the page, reading exactly the page's
items from it (at least one 4 KB unit a request, halved for eventually consistent reads).
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from bench.support.local_store import local_store
from bench.support.report import recording_tables, save
from dynashard.query import PageBudget, query_read_units
from incidents.incident.commands import add_note, resolve_incident
from incidents.incident.create import create_incident
from incidents.models import AccountEvent, IncidentSummary, ScheduleHandoff
from incidents.paging import PageRequest
from incidents.requests import AddNote, CreateIncident
from incidents.store import Caller, Store
from incidents.tenant_shards import Family
from incidents.timeline.events import event_item, first_summary, require_counted
from incidents.timeline.queries import (
    AccountEventPage,
    EventPage,
    EventRequest,
    account_events,
    incident_timeline,
)
from lambdas.incident_queries import PAGE_READ_UNITS, PAGE_SECONDS

INCIDENTS = 120
NOTES = 3
LONG = 600
PAGES = 10
LIMITS = (25, 100)


def seed(store: Store, caller: Caller) -> str:
    """The account's incidents and events, at the stage's counts (a busy account's: `/events`
    over 16 shards); returns the incident with the long timeline."""
    store.shards.ensure_maps(caller.account_id, config=store.config)
    for n in range(INCIDENTS):
        incident = create_incident(store, caller, CreateIncident(title=f"incident {n}"))
        for k in range(NOTES):
            add_note(store, caller, incident.summary.id, AddNote(text=f"step {k} of {n}"))
        resolve_incident(store, caller, incident.summary.id)
    long = create_incident(store, caller, CreateIncident(title="the long one")).summary.id
    for k in range(LONG - 1):
        add_note(store, caller, long, AddNote(text=f"Observed p99 {k} ms after rollback {k}"))
    return long


def oracle(store: Store, caller: Caller, items: Sequence[AccountEvent], by_index: bool) -> float:
    """One request per stream that supplied `items`, reading exactly them (each event sized
    with its incident's summary as it is now: the same size as the one after the change)."""
    streams: dict[str, list[Any]] = defaultdict(list)
    summaries: dict[str, IncidentSummary] = {}
    for event in items:
        assert not isinstance(event, ScheduleHandoff), "the bench's accounts have no schedules"
        if event.incident_id not in summaries:
            summaries[event.incident_id] = require_counted(store, caller, event.incident_id).summary
        after = first_summary(event) or summaries[event.incident_id]
        item = event_item(store, caller.account_id, event, after)
        streams[item["GSI2PK"]["S"] if by_index else item["PK"]["S"]].append(item)
    return sum(query_read_units(group, consistent=False) for group in streams.values())


def events_read_count(store: Store, caller: Caller) -> int:
    """Shards the account's `/events` fans out over."""
    return store.shards.meta(caller.account_id, Family.EVENTS).read_count


def walk(
    store: Store,
    caller: Caller,
    read: Callable[[PageRequest], EventPage | AccountEventPage],
    limit: int,
    by_index: bool,
) -> dict[str, float]:
    """`PAGES` pages of one list: means a page of RCU, oracle RCU, requests, round trips;
    the median milliseconds."""
    cursor, pages, millis = None, [], []
    for _ in range(PAGES):
        budget = PageBudget.within(PAGE_SECONDS, PAGE_READ_UNITS)
        began = time.perf_counter()
        page = read(PageRequest(limit, cursor, budget))
        millis.append((time.perf_counter() - began) * 1000)
        pages.append((page.stats, oracle(store, caller, page.items, by_index)))
        cursor = page.next_cursor
        if not page.has_more:
            break
    count = len(pages)
    rcu = sum(stats.read_units for stats, _ in pages) / count
    floor = sum(units for _, units in pages) / count
    return {
        "pages": count,
        "rcu": rcu,
        "oracle_rcu": floor,
        "over_oracle": rcu / floor if floor else 0.0,
        "requests": sum(stats.requests for stats, _ in pages) / count,
        "round_trips": sum(stats.round_trips for stats, _ in pages) / count,
        "ms_median": statistics.median(millis),
    }


def main() -> None:
    """Seed once, then walk both lists at each limit."""
    with local_store("bench-timeline") as (store, caller, engine):
        long = seed(store, caller)
        rows = []
        for limit in LIMITS:
            rows.append(
                (
                    f"timeline of {LONG} events, limit {limit}",
                    walk(
                        store,
                        caller,
                        lambda page: incident_timeline(store, caller, long, EventRequest(page)),
                        limit,
                        by_index=False,
                    ),
                )
            )
            rows.append(
                (
                    f"/events over {events_read_count(store, caller)} shards, limit {limit}",
                    walk(
                        store,
                        caller,
                        lambda page: account_events(store, caller, EventRequest(page)),
                        limit,
                        by_index=True,
                    ),
                )
            )
    with recording_tables():
        print(f"Reading events, mean of up to {PAGES} pages ({engine.description})")
        print()
        print("| list | RCU a page | oracle RCU | x oracle | requests | round trips | ms p50 |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, r in rows:
            print(
                f"| {name} | {r['rcu']:.1f} | {r['oracle_rcu']:.1f} | {r['over_oracle']:.2f}x "
                f"| {r['requests']:.1f} | {r['round_trips']:.1f} | {r['ms_median']:.1f} |"
            )
        payload = {"incidents": INCIDENTS, "long": LONG, "rows": dict(rows)}
        print(f"written to {save('timeline_reads', payload)}")


if __name__ == "__main__":
    main()
