"""Filtered lists: what a filtered page costs against an oracle that reads only its items.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.filters``).
On AWS DynamoDB Local, one account's `INCIDENTS` open incidents (statuses half triggered,
half acknowledged; severities weighted so that SEV1 is 1 %, SEV1-SEV2 10 % and SEV1-SEV3
50 %) are listed newest first over 16 and 64 OPEN shards, pages of 25, `PAGES` pages, with
time windows (a key condition) and status and severity filters (filter expressions) of
50 %, 10 % and 1 % selectivity. The oracle pays, a returned item, what the unfiltered walk
pays an item (an index keyed by exactly the filter would read only matching items at that
rate); short pages are those the handlers' 200-unit budget cut.
"""

from __future__ import annotations

import random
import statistics
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from bench.report import save
from dynashard import PageBudget, WeightedShards
from incidents.incident_commands import new_incident_items
from incidents.incident_queries import (
    CreatedWindow,
    IncidentFilter,
    PageRequest,
    account_incidents,
)
from incidents.items import details_body
from incidents.keys import ShardConfig
from incidents.models import IncidentSummary, Participation, Role, Severity, State, Status
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from local.clients import create_table, local_client
from local.demo_data import START, write_batches
from local.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

INCIDENTS = 4000
PAGES = 10
SHARDS = (16, 64)
SEVERITY_WEIGHTS = [1, 9, 40, 25, 25]
"""SEV1 1 %, SEV1-SEV2 10 %, SEV1-SEV3 50 %."""
MINUTES = 7
FILTERS: dict[str, IncidentFilter] = {
    "status ACKNOWLEDGED (50 %)": IncidentFilter(statuses=(Status.ACKNOWLEDGED,)),
    "severity SEV1-SEV3 (50 %)": IncidentFilter(
        severities=(Severity.SEV1, Severity.SEV2, Severity.SEV3)
    ),
    "severity SEV1-SEV2 (10 %)": IncidentFilter(severities=(Severity.SEV1, Severity.SEV2)),
    "severity SEV1 (1 %)": IncidentFilter(severities=(Severity.SEV1,)),
}
WINDOWS = {"window 50 %": 0.5, "window 10 %": 0.1, "window 1 %": 0.01}
"""The newest fraction of the incidents, as `since`."""


def seed(store: Store, caller: Caller) -> None:
    """`INCIDENTS` open incidents of the account, written in batches."""
    rng = random.Random(11)
    items = []
    for n in range(INCIDENTS):
        at = START + timedelta(minutes=MINUTES * n)
        summary = IncidentSummary(
            id=new_id("inc"),
            number=n + 1,
            title=f"incident {n}",
            status=rng.choice([Status.TRIGGERED, Status.ACKNOWLEDGED]),
            severity=rng.choices(list(Severity), weights=SEVERITY_WEIGHTS)[0],
            created_by=caller.user_id,
            created_at=at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            updated_at=at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            version=1,
        )
        creator = Participation(
            participant_id=caller.user_id, roles=[Role.CREATOR], incident=summary
        )
        items += new_incident_items(store, caller.account_id, summary, details_body({}), [creator])
    write_batches(store, items)


def walk(
    store: Store, caller: Caller, chosen: IncidentFilter, window: CreatedWindow
) -> dict[str, Any]:
    """`PAGES` pages of 25 with the handlers' read budget; per page cost."""
    cursor, pages = None, []
    for _ in range(PAGES):
        budget = PageBudget(read_units=200.0)
        request = PageRequest(25, cursor, budget, filter=chosen, window=window)
        page = account_incidents(store, caller, State.OPEN, request)
        pages.append(page)
        cursor = page.next_cursor
        if not cursor:
            break
    items = sum(len(p.items) for p in pages)
    units = sum(p.stats.read_units for p in pages)
    return {
        "pages": len(pages),
        "items": items,
        "rcu_per_page": units / len(pages),
        "rcu_per_item": units / items if items else float("inf"),
        "items_read_per_item": sum(p.stats.items_read for p in pages) / max(items, 1),
        "requests_per_page": statistics.mean(p.stats.requests for p in pages),
        "round_trips_p95": sorted(p.stats.round_trips for p in pages)[int(0.95 * (len(pages) - 1))],
        "short_pages": sum(p.stats.budget_spent for p in pages),
    }


def measure(client: DynamoDBClient, shards: int) -> dict[str, dict[str, Any]]:
    """Every filter and window on one account whose OPEN list has `shards` shards."""
    config = ShardConfig(state_shards=WeightedShards({"OPEN": shards, "CLOSED": 32}))
    store = build_store(client, "bench-filters", b"bench-cursor-secret-" * 2, config=config)
    caller = Caller(new_id("acct"), new_id("user"))
    seed(store, caller)
    last = START + timedelta(minutes=MINUTES * INCIDENTS)
    results = {"none": walk(store, caller, IncidentFilter(), CreatedWindow())}
    for name, fraction in WINDOWS.items():
        since = last - timedelta(minutes=MINUTES * INCIDENTS * fraction)
        results[name] = walk(store, caller, IncidentFilter(), CreatedWindow(since=since))
    for name, chosen in FILTERS.items():
        results[name] = walk(store, caller, chosen, CreatedWindow())
    store.engine.close()
    return results


def main() -> None:
    """Every filter and window at 16 and 64 shards; ratios to the oracle."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, "bench-filters")
        measured = {shards: measure(client, shards) for shards in SHARDS}
    print(f"filtered walks on {engine.description}: {INCIDENTS} open incidents, pages of 25,")
    print(f"first {PAGES} pages; x oracle = RCU an item / the unfiltered walk's RCU an item")
    print(
        "shards  filter                      items  RCU/page  RCU/item  x oracle  read/item"
        "  requests/page  trips p95  short"
    )
    for shards, results in measured.items():
        floor = results["none"]["rcu_per_item"]
        for name, r in results.items():
            print(
                f"{shards:6d}  {name:<26}{r['items']:6d}{r['rcu_per_page']:10.1f}"
                f"{r['rcu_per_item']:10.3f}{r['rcu_per_item'] / floor:9.1f}x"
                f"{r['items_read_per_item']:11.1f}{r['requests_per_page']:15.1f}"
                f"{r['round_trips_p95']:11d}{r['short_pages']:7d}"
            )
    payload = {"incidents": INCIDENTS, "results": {str(k): v for k, v in measured.items()}}
    print(f"written to {save('filters', payload)}")


if __name__ == "__main__":
    main()
