"""Issue 31's shape through the handlers' own query, with real incident items.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.handler_walk``).
On AWS DynamoDB Local, a member of `TEAMS` teams (the stage's shard settings: one shard a
team), `INCIDENTS` open incidents each with a copy on `COPIES` of the teams, `MATCHING` of
them ``ACKNOWLEDGED`` and ``SEV5``. "All my teams" (`my_teams_incidents`) is walked to its end
newest first with the handlers' budget (3 s, 200 read units a page), unfiltered and with
``status=ACKNOWLEDGED&severity=SEV5``, at pages of 100 and 25. The baseline is the walk's
floor: every copy read once, in eventually consistent units of 4 KB (what no walk of this
list can read for less).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from bench.support.report import recording_tables, save
from dynashard.query import Item, PageBudget, query_read_units
from incidents.incident.create import new_summary
from incidents.incident.queries import my_teams_incidents
from incidents.models import Severity, State, Status, timestamp
from incidents.paging import IncidentFilter, PageRequest
from incidents.requests import CreateIncident, CreateTeam
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.team_commands import create_team
from local.demo.data import START, created_items, write_batches
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

TEAMS = 100
INCIDENTS = 287
COPIES = 45
MATCHING = 5
PAGE_SECONDS = 3.0
READ_BUDGET = 200.0
TABLE = "bench-handler-walk"
FILTERS = {
    "none": IncidentFilter(),
    "ACKNOWLEDGED, SEV5": IncidentFilter((Status.ACKNOWLEDGED,), (Severity.SEV5,)),
}


@dataclass(frozen=True)
class Walk:
    """What walking the list to its end cost."""

    pages: int
    incidents: int
    read_units: float
    heaviest_page: float


def seed(store: Store, caller: Caller) -> list[Item]:
    """The teams and the incidents; the items written."""
    teams = [create_team(store, caller, CreateTeam(name=f"T{n}")).id for n in range(TEAMS)]
    rng = random.Random(31)
    matching = set(rng.sample(range(INCIDENTS), MATCHING))
    items: list[Item] = []
    for n in range(INCIDENTS):
        status, severity = Status.ACKNOWLEDGED, Severity.SEV5
        if n not in matching:  # anything but ACKNOWLEDGED and SEV5
            status = rng.choice([Status.TRIGGERED, Status.ACKNOWLEDGED])
            others = list(Severity)[:-1] if status == Status.ACKNOWLEDGED else list(Severity)
            severity = rng.choice(others)
        title = f"incident {n}: database failover"
        request = CreateIncident(title=title, status=status, severity=severity)
        at = timestamp(START + timedelta(minutes=7 * n))
        summary = new_summary(caller, n + 1, request, at)
        items += created_items(store, caller, summary, rng.sample(teams, COPIES))
    write_batches(store, items)
    return items


def walk(store: Store, caller: Caller, chosen: IncidentFilter, limit: int) -> Walk:
    """Page the list to its end with the handlers' budget."""
    cursor, pages, units, heaviest, incidents = None, 0, 0.0, 0.0, 0
    while True:
        budget = PageBudget.within(PAGE_SECONDS, READ_BUDGET)
        page = my_teams_incidents(
            store, caller, State.OPEN, PageRequest(limit, cursor, budget, filter=chosen)
        )
        pages, incidents = pages + 1, incidents + len(page.items)
        units, heaviest = units + page.stats.read_units, max(heaviest, page.stats.read_units)
        cursor = page.next_cursor
        if not cursor:
            return Walk(pages, incidents, units, heaviest)


def floor_units(items: list[Item]) -> float:
    """Every team copy read once (the creator's copies and summaries are not in the list)."""
    copies = [i for i in items if i.get("participant_id", {}).get("S", "").startswith("team_")]
    if len(copies) != INCIDENTS * COPIES:
        raise AssertionError(f"{len(copies)} team copies, not {INCIDENTS * COPIES}")
    return query_read_units(copies, consistent=False)


def main() -> None:
    """Measure on a fresh DynamoDB Local; print the table; save the JSON."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, TABLE)
        store = build_store(client, TABLE, b"bench-handler-walk-secret" * 2)
        caller = Caller(new_id("acct"), new_id("user"))
        items = seed(store, caller)
        floor = floor_units(items)
        rows: list[dict[str, Any]] = []
        for name, chosen in FILTERS.items():
            for limit in (100, 25):
                done = walk(store, caller, chosen, limit)
                rows.append({"filter": name, "limit": limit, **asdict(done)})
    print(
        f'"all my teams" through my_teams_incidents on {engine.description}: {TEAMS} teams,'
        f" {INCIDENTS} incidents with a copy on {COPIES} of them each, budget"
        f" {PAGE_SECONDS:.0f} s / {READ_BUDGET:.0f} RU a page\n"
    )
    print(
        "| filter | page | pages | incidents | RCU | heaviest page | floor (same run) | x floor |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['filter']} | {r['limit']} | {r['pages']} | {r['incidents']} |"
            f" {r['read_units']:,.1f} | {r['heaviest_page']:.1f} | {floor:,.1f} |"
            f" {r['read_units'] / floor:.2f}x |"
        )
    print(f"\nwritten to {save('handler_walk', {'floor_units': floor, 'rows': rows})}")


if __name__ == "__main__":
    with recording_tables():
        main()
