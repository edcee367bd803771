"""An oldest-first page cut by its budget resumes from a real position (issue 29, point
7): it resumed at an estimated key (``2026-96...``, ``...03:59:66...``) past the present,
so incidents created before the next request sorted behind the cursor and were never
shown. A walk with a budget small enough to cut most pages, creating an incident before
every page, must show every incident exactly once."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from dynashard.query import PageBudget
from incidents.incident.create import create_incident, new_summary
from incidents.incident.queries import account_incidents, my_incidents
from incidents.models import State, timestamp, utc_now
from incidents.paging import PageRequest
from incidents.requests import CreateIncident
from incidents.store import Caller, Store, new_id
from local.demo.data import created_items, write_batches

pytestmark = pytest.mark.integration
TIGHT = 1.0
"""Read units a page may spend: most pages of the walk are cut by it."""


@pytest.mark.parametrize("listing", ["account", "mine"])
def test_a_budget_cut_walk_shows_incidents_created_meanwhile(store: Store, listing: str) -> None:
    rng = random.Random(7)
    who = Caller(new_id("acct"), new_id("user"))
    now = utc_now()
    items, expected = [], set()
    for n in range(120):  # the last half hour, denser towards its end
        at = timestamp(now - timedelta(seconds=1800 * rng.random() ** 3))
        summary = new_summary(who, n + 1, CreateIncident(title=f"old {n}"), at)
        items += created_items(store, who, summary)
        expected.add(summary.id)
    write_batches(store, items)
    seen: list[str] = []
    cursor = None
    for page_number in range(400):
        created = create_incident(store, who, CreateIncident(title=f"new {page_number}"))
        expected.add(created.summary.id)
        request = PageRequest(
            limit=10, cursor=cursor, descending=False, budget=PageBudget(read_units=TIGHT)
        )
        read = account_incidents if listing == "account" else my_incidents
        page = read(store, who, State.OPEN, request)
        seen += [item.id for item in page.items]
        if not page.has_more:
            break
        cursor = page.next_cursor
    assert len(seen) == len(set(seen)), "no repeats"
    assert set(seen) == expected, f"{len(expected - set(seen))} never shown"
