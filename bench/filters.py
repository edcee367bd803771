"""Status and severity filters: what a filtered page costs against reading only its items.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.filters``).
On AWS DynamoDB Local, one account's `INCIDENTS` open incidents (the demo's mix: statuses
3:2 triggered/acknowledged, severities 1:3:5:3:1) are listed newest first over the account's
8 OPEN shards, pages of 25, `PAGES` pages, unfiltered and with severity and status filters
of several selectivities. The unfiltered walk's read units a returned item are what a key
design (an index keyed by severity or status, read only for matching items) would pay a
returned item: the filter's cost is shown against it. Short pages are those the handlers'
200-unit budget cut.
"""

from __future__ import annotations

import random
import statistics
from datetime import timedelta
from typing import Any

from bench.report import save
from dynashard import PageBudget
from incidents.incident_commands import new_incident_items
from incidents.incident_queries import IncidentFilter, PageRequest, account_incidents
from incidents.items import details_body
from incidents.models import IncidentSummary, Participation, Role, Severity, State, Status
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from local.clients import create_table, local_client
from local.demo_data import START, write_batches
from local.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

INCIDENTS = 3000
PAGES = 10
FILTERS: dict[str, IncidentFilter] = {
    "none": IncidentFilter(),
    "severity SEV1 (~8 %)": IncidentFilter(severities=(Severity.SEV1,)),
    "severity SEV1,SEV2 (~31 %)": IncidentFilter(severities=(Severity.SEV1, Severity.SEV2)),
    "status ACKNOWLEDGED (~40 %)": IncidentFilter(statuses=(Status.ACKNOWLEDGED,)),
    "ACKNOWLEDGED and SEV1 (~3 %)": IncidentFilter(
        statuses=(Status.ACKNOWLEDGED,), severities=(Severity.SEV1,)
    ),
}


def seed(store: Store, caller: Caller) -> None:
    """`INCIDENTS` open incidents of the account, written in batches."""
    rng = random.Random(11)
    items = []
    for n in range(INCIDENTS):
        at = START + timedelta(minutes=7 * n)
        summary = IncidentSummary(
            id=new_id("inc"),
            number=n + 1,
            title=f"incident {n}",
            status=rng.choices([Status.TRIGGERED, Status.ACKNOWLEDGED], weights=[3, 2])[0],
            severity=rng.choices(list(Severity), weights=[1, 3, 5, 3, 1])[0],
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


def walk(store: Store, caller: Caller, chosen: IncidentFilter) -> dict[str, Any]:
    """`PAGES` pages of 25 with the handlers' read budget; per page cost."""
    cursor, pages = None, []
    for _ in range(PAGES):
        request = PageRequest(25, cursor, PageBudget(read_units=200.0), filter=chosen)
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
        "short_pages": sum(p.stats.budget_spent for p in pages),
    }


def main() -> None:
    """Every filter on one seeded account; ratios to the unfiltered read units an item."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, "bench-filters")
        store = build_store(client, "bench-filters", b"bench-cursor-secret-" * 2)
        caller = Caller(new_id("acct"), new_id("user"))
        seed(store, caller)
        results = {name: walk(store, caller, chosen) for name, chosen in FILTERS.items()}
        store.engine.close()
    floor = results["none"]["rcu_per_item"]
    print(f"filtered walks on {engine.description}: {INCIDENTS} open incidents, 8 shards,")
    print(
        f"pages of 25, first {PAGES} pages; 'x key design' = RCU an item / unfiltered RCU an item"
    )
    print(
        "filter                           items  RCU/page  RCU/item  x key design  read/item"
        "  requests/page  short"
    )
    for name, r in results.items():
        print(
            f"{name:<32}{r['items']:6d}{r['rcu_per_page']:10.1f}{r['rcu_per_item']:10.3f}"
            f"{r['rcu_per_item'] / floor:13.1f}x{r['items_read_per_item']:10.1f}"
            f"{r['requests_per_page']:15.1f}{r['short_pages']:7d}"
        )
    print(f"written to {save('filters', {'incidents': INCIDENTS, 'results': results})}")


if __name__ == "__main__":
    main()
