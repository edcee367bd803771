"""Polling ``GET /events`` oldest first never misses an event (issue 40, point 9).

``/events`` is ordered by ``at``, stamped before the transaction commits: a poller that
walked to the end and resumed from the newest ``at`` it saw missed 14 of 3,339 events that
committed behind it. An oldest-first walk now stops at the settled horizon (`SETTLE_SECONDS`
before its first page, the bound on a command's stamp-to-commit time) and its last page
names ``next_since``, where the next poll starts."""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from incidents.incident.commands import add_note
from incidents.incident.create import create_incident
from incidents.models import parse_timestamp
from incidents.paging import CreatedWindow, PageRequest
from incidents.requests import AddNote, CreateIncident
from incidents.store import Caller, Store, new_id
from incidents.timeline import queries as timeline_queries
from incidents.timeline.queries import EventRequest, settled_events
from tests.helpers.api_harness import Api

pytestmark = pytest.mark.integration
NOTES = 15
"""Notes each writer adds (a count, not a duration: a loaded machine writes fewer a second)."""


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def poll(store: Store, who: Caller, since: datetime, now: datetime) -> tuple[list[str], datetime]:
    """One poll by the documented rule: walk oldest first from `since` to the end; the ids
    served and the ``next_since`` to resume from."""
    served: list[str] = []
    cursor = None
    while True:
        page = PageRequest(limit=7, cursor=cursor, descending=False, window=CreatedWindow(since))
        settled = settled_events(store, who, EventRequest(page), now)
        served += [event.id for event in settled.page.items]
        if settled.next_since is not None:
            return served, parse_timestamp(settled.next_since)
        cursor = settled.page.next_cursor


def at(moment: datetime) -> Callable[[], datetime]:
    return lambda: moment


def late_commit_story(store: Store, who: Caller) -> tuple[list[list[str]], str]:
    """A note committed at 0 s, a poll at 20 s, a note stamped at 10 s that commits after
    that poll (10 s from stamp to commit, inside the bound), a poll at 40 s."""
    start = store.clock()
    early = dataclasses.replace(store, clock=at(start))
    incident = create_incident(early, who, CreateIncident(title="Slow commit")).summary.id
    first, next_since = poll(
        store, who, start - timedelta(seconds=1), start + timedelta(seconds=20)
    )
    stamped_late = dataclasses.replace(store, clock=at(start + timedelta(seconds=10)))
    late = add_note(stamped_late, who, incident, AddNote(text="stamped at 10 s")).id
    second, _ = poll(store, who, next_since, start + timedelta(seconds=40))
    return [first, second], late


def test_an_event_committed_behind_a_poll_is_served_by_the_next_one(
    store: Store, alice: Caller
) -> None:
    (first, second), late = late_commit_story(store, alice)
    assert len(first) == 1
    assert second == [late]


def test_without_the_horizon_that_event_is_missed(
    store: Store, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The oracle can fail: read up to now (as /events did), the late event is lost."""
    monkeypatch.setattr(timeline_queries, "SETTLE_SECONDS", 0)
    (first, second), late = late_commit_story(store, alice)
    assert len(first) == 1
    assert late not in second


def test_concurrent_writers_and_a_poller_miss_nothing_and_repeat_nothing(
    store: Store, alice: Caller, monkeypatch: pytest.MonkeyPatch, slow_commits: None
) -> None:
    """4 writers add 15 notes each, each commit up to 0.3 s after its stamp; a poller polls
    by the rule all along, then once more after the horizon passed the last write. The
    horizon here is 2 s: well above the 0.3 s injected, so a loaded machine's own slowness
    (DynamoDB Local under a full test run) stays inside it too."""
    monkeypatch.setattr(timeline_queries, "SETTLE_SECONDS", 2)
    since = store.clock() - timedelta(seconds=1)  # before the creations, however slow
    incidents = [
        create_incident(store, alice, CreateIncident(title=f"Busy {n}")).summary.id
        for n in range(4)
    ]
    written: list[str] = [*polled_ids(store, alice, since)]  # the creations
    threads = [
        threading.Thread(target=write_notes, args=(store, alice, incident, written))
        for incident in incidents
    ]
    for thread in threads:
        thread.start()
    seen: list[str] = []
    while any(thread.is_alive() for thread in threads):
        served, since = poll(store, alice, since, store.clock())
        seen += served
    time.sleep(2.5)
    served, _ = poll(store, alice, since, store.clock())
    seen += served
    assert len(written) == 4 + 4 * NOTES
    assert len(seen) == len(set(seen)), "an event served twice"
    assert set(seen) == set(written), f"missed {len(set(written) - set(seen))}"


def polled_ids(store: Store, who: Caller, since: datetime) -> Iterator[str]:
    """Every event from `since`, read at once (no horizon): what was written so far."""
    served, _ = poll(store, who, since, store.clock() + timedelta(seconds=60))
    yield from served


def write_notes(store: Store, who: Caller, incident: str, written: list[str]) -> None:
    for n in range(NOTES):
        written.append(add_note(store, who, incident, AddNote(text=f"note {n}")).id)


@pytest.fixture
def slow_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each transaction sent 0-0.3 s after it was built (its event stamped): the gap in
    which a poller reading up to now would pass an event that has not committed yet."""
    send = Store.transact

    def slow(self: Store, *args: Any) -> None:
        time.sleep(random.uniform(0, 0.3))
        send(self, *args)

    monkeypatch.setattr(Store, "transact", slow)


def test_a_walk_keeps_its_horizon_and_an_edited_one_is_refused(api: Api, alice: Caller) -> None:
    for n in range(3):
        assert api.call("create_incident", alice, body={"title": f"Old {n}"}).status == 201
    asc = {"order": ["asc"], "limit": ["1"]}
    first = api.call("account_events", alice, query=asc)
    assert (first.status, first.body["items"], first.body["has_more"]) == (200, [], False)
    assert first.body["next_since"] is not None, "the last page says where to resume"
    newest = api.call("account_events", alice, query={"limit": ["1"]})
    assert newest.body["next_since"] is None
    assert newest.body["has_more"] is True
    desc_cursor = newest.body["next_cursor"]
    mixed = api.call("account_events", alice, query={**asc, "cursor": [desc_cursor]})
    assert (mixed.status, mixed.body["code"]) == (400, "invalid_cursor")


def test_a_settled_cursor_with_an_edited_horizon_is_refused(store: Store, alice: Caller) -> None:
    start = store.clock()
    for n in range(3):
        create_incident(store, alice, CreateIncident(title=f"Old {n}"))
    later = start + timedelta(seconds=60)
    page = PageRequest(limit=1, descending=False)
    walk = settled_events(store, alice, EventRequest(page), later)
    cursor = walk.page.next_cursor
    assert cursor is not None
    assert walk.next_since is None
    horizon, _, rest = cursor.partition(".")
    onward = settled_events(
        store, alice, EventRequest(dataclasses.replace(page, cursor=cursor)), later
    )
    assert len(onward.page.items) == 1
    edited = f"{int(horizon) + 1}.{rest}"
    with pytest.raises(ValueError, match="cursor"):
        settled_events(store, alice, EventRequest(dataclasses.replace(page, cursor=edited)), later)


def test_a_first_page_etag_is_a_304_until_the_page_changes(api: Api, alice: Caller) -> None:
    incident = api.call("create_incident", alice, body={"title": "Polled"}).body["summary"]["id"]
    first = api.call("account_events", alice, query={"limit": ["5"]})
    tag = first.headers["ETag"]
    unless = {"If-None-Match": tag}
    same = api.call("account_events", alice, query={"limit": ["5"]}, headers=unless)
    assert (same.status, same.body) == (304, None)
    noted = api.call("add_note", alice, {"incident_id": incident}, body={"text": "more"})
    assert noted.status == 201
    changed = api.call(
        "account_events", alice, query={"limit": ["5"]}, headers={"If-None-Match": tag}
    )
    assert changed.status == 200
    assert changed.headers["ETag"] != tag
    assert changed.body["items"][0]["id"] == noted.body["id"]
    other = api.call(
        "account_events", alice, query={"limit": ["4"]}, headers={"If-None-Match": tag}
    )
    assert other.status == 200, "another page is another tag"
