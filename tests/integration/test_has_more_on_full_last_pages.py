"""`has_more` on a filtered list whose last page is exactly full, with more streams than
the page (issue 29, point 6): a first page with no plan and nothing left to read ahead
returned without settling `has_more` (true, then an empty page). Seeds that failed before,
on the account's closed list (32 shards) filtered to SEV1, every limit 1-12, both orders."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from incidents.incident.create import new_summary
from incidents.incident.queries import account_incidents
from incidents.models import Severity, State, Status, timestamp
from incidents.paging import IncidentFilter, PageRequest
from incidents.requests import CreateIncident
from incidents.store import Caller, Store, new_id
from local.demo.data import created_items, write_batches

pytestmark = pytest.mark.integration
SEV1 = IncidentFilter(severities=(Severity.SEV1,))


def seeded_account(store: Store, seed: int) -> tuple[Caller, int]:
    """An account with a few SEV1 and more other closed incidents at random times."""
    rng = random.Random(seed)
    who = Caller(new_id("acct"), new_id("user"))
    matching, others = rng.randint(1, 12), rng.randint(0, 60)
    start, items = datetime(2026, 1, 1, tzinfo=UTC), []
    for n in range(matching + others):
        severity = Severity.SEV1 if n < matching else rng.choice([Severity.SEV2, Severity.SEV3])
        at = timestamp(start + timedelta(minutes=rng.randint(0, 10_000)))
        request = CreateIncident(title=f"t{n}", status=Status.RESOLVED, severity=severity)
        items += created_items(store, who, new_summary(who, n + 1, request, at))
    write_batches(store, items)
    return who, matching


@pytest.mark.parametrize("seed", [20, 26, 30, 35])
def test_the_page_that_ends_the_list_says_so(store: Store, seed: int) -> None:
    who, matching = seeded_account(store, seed)
    for limit in range(1, 13):
        for descending in (False, True):
            seen, cursor = 0, None
            while True:
                page = account_incidents(
                    store,
                    who,
                    State.CLOSED,
                    PageRequest(limit=limit, cursor=cursor, descending=descending, filter=SEV1),
                )
                seen += len(page.items)
                assert page.has_more == (seen < matching), (limit, descending, seen)
                if not page.has_more:
                    break
                cursor = page.next_cursor
            assert seen == matching
