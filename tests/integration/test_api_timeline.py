"""The timeline's routes through the real handlers: notes (with Idempotency-Key and the
text rules), an incident's timeline and the account's events, paged and isolated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from incidents.models import NOTE_MAX_CHARACTERS
from incidents.store import Caller, new_id
from incidents.timeline import queries as timeline_queries
from tests.helpers.api_harness import Api

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def new_incident(api: Api, who: Caller) -> str:
    reply = api.call("create_incident", who, body={"title": "DB down"})
    assert reply.status == 201, reply.body
    return str(reply.body["summary"]["id"])


def note(api: Api, who: Caller, incident: str, text: Any, **headers: str) -> Any:
    return api.call(
        "add_note", who, {"incident_id": incident}, body={"text": text}, headers=headers
    )


def test_a_note_is_201_with_its_event_and_shows_on_the_timeline(api: Api, alice: Caller) -> None:
    incident = new_incident(api, alice)
    written = note(api, alice, incident, "Cafe\u0301 rolled back")
    assert written.status == 201, written.body
    event = written.body
    assert (event["type"], event["seq"], event["incident_id"]) == ("note.added", 2, incident)
    assert event["note"] == {"text": "Caf\u00e9 rolled back"}  # stored in NFC
    assert event["actor"] == {"user_id": alice.user_id}
    assert event["id"].startswith("evt_")
    assert set(event) == {"id", "incident_id", "seq", "type", "at", "actor", "version", "note"}
    listed = api.call("incident_timeline", alice, {"incident_id": incident})
    assert listed.status == 200
    assert [e["type"] for e in listed.body["items"]] == ["incident.created", "note.added"]
    assert listed.body["items"][1] == event
    assert (listed.body["has_more"], listed.body["next_cursor"]) == (False, None)


def test_a_retried_note_with_the_same_key_is_written_once(api: Api, alice: Caller) -> None:
    incident = new_incident(api, alice)
    first = note(api, alice, incident, "once", **{"Idempotency-Key": "k-1"})
    again = note(api, alice, incident, "once", **{"Idempotency-Key": "k-1"})
    assert (first.status, again.status) == (201, 201)
    assert again.body == first.body
    other = note(api, alice, incident, "different", **{"Idempotency-Key": "k-1"})
    assert (other.status, other.body["code"]) == (409, "idempotency_key_reused")
    listed = api.call("incident_timeline", alice, {"incident_id": incident})
    assert [e["seq"] for e in listed.body["items"]] == [1, 2]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "line\nbreak",
        "\u202eevil",
        "\u200b",
        "x" * (NOTE_MAX_CHARACTERS + 1),
        "\U0001f525" * 501,  # 501 characters, 2,004 bytes of UTF-8
        "\ufb2c" * 400,  # 400 characters that NFC turns into 1,200
    ],
)
def test_a_note_breaking_the_text_rules_is_400_and_writes_nothing(
    api: Api, alice: Caller, text: str
) -> None:
    incident = new_incident(api, alice)
    refused = note(api, alice, incident, text)
    assert (refused.status, refused.body["code"]) == (400, "validation_error"), refused.body
    listed = api.call("incident_timeline", alice, {"incident_id": incident})
    assert [e["seq"] for e in listed.body["items"]] == [1]


def test_another_accounts_incident_has_no_timeline_and_takes_no_note(
    api: Api, alice: Caller
) -> None:
    incident = new_incident(api, alice)
    mallory = Caller(new_id("acct"), new_id("user"))
    for reply in (
        api.call("incident_timeline", mallory, {"incident_id": incident}),
        note(api, mallory, incident, "hi"),
    ):
        assert (reply.status, reply.body["code"]) == (404, "not_found")
    mine = api.call("account_events", alice)
    theirs = api.call("account_events", mallory)
    assert [e["incident_id"] for e in mine.body["items"]] == [incident]
    assert theirs.body["items"] == []


def test_the_timeline_pages_filters_and_orders(api: Api, alice: Caller) -> None:
    incident = new_incident(api, alice)
    path = {"incident_id": incident}
    for n in range(5):
        assert note(api, alice, incident, f"n{n}").status == 201
    api.call("resolve_incident", alice, path)
    seen: list[int] = []
    query: dict[str, list[str]] = {"limit": ["2"]}
    while True:
        page = api.call("incident_timeline", alice, path, query=query)
        assert page.status == 200, page.body
        seen += [e["seq"] for e in page.body["items"]]
        if not page.body["has_more"]:
            break
        query = {"limit": ["2"], "cursor": [page.body["next_cursor"]]}
    assert seen == [1, 2, 3, 4, 5, 6, 7]
    newest = api.call("incident_timeline", alice, path, query={"order": ["desc"], "limit": ["1"]})
    assert [e["type"] for e in newest.body["items"]] == ["incident.resolved"]
    kinds = {"type": ["incident.created", "incident.resolved"]}
    picked = api.call("incident_timeline", alice, path, query=kinds)
    assert [e["seq"] for e in picked.body["items"]] == [1, 7]
    other = new_incident(api, alice)
    reused = api.call(
        "incident_timeline",
        alice,
        {"incident_id": other},
        query={"limit": ["2"], "cursor": [newest.body["next_cursor"]]},
    )
    assert (reused.status, reused.body["code"]) == (400, "invalid_cursor")
    wrong = api.call("incident_timeline", alice, path, query={"type": ["incident.deleted"]})
    assert (wrong.status, wrong.body["code"]) == (400, "validation_error")


def test_account_events_window_and_types(
    api: Api, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeline_queries, "SETTLE_SECONDS", 0)  # oldest first: read at once
    first = new_incident(api, alice)
    second = new_incident(api, alice)
    assert note(api, alice, first, "on first").status == 201
    everything = api.call("account_events", alice)
    assert [(e["incident_id"], e["type"]) for e in everything.body["items"]] == [
        (first, "note.added"),
        (second, "incident.created"),
        (first, "incident.created"),
    ]
    oldest = api.call("account_events", alice, query={"order": ["asc"], "limit": ["1"]})
    assert oldest.body["items"][0]["incident_id"] == first
    assert oldest.body["has_more"] is True
    middle = everything.body["items"][1]["at"]
    since = api.call("account_events", alice, query={"since": [middle]})
    assert len(since.body["items"]) == 2
    until = api.call("account_events", alice, query={"until": [middle]})
    assert [e["incident_id"] for e in until.body["items"]] == [first]
    notes = api.call("account_events", alice, query={"type": ["note.added"]})
    assert [e["type"] for e in notes.body["items"]] == ["note.added"]


def test_a_cursor_needs_the_order_it_was_made_with(api: Api, alice: Caller) -> None:
    """Issue 40, point 10: the document said "a cursor keeps the order it was made with";
    a ``desc`` cursor sent without ``order=desc`` is 400, as the description now says."""
    incident = new_incident(api, alice)
    for n in range(3):
        note(api, alice, incident, f"n{n}")
    path = {"incident_id": incident}
    first = api.call("incident_timeline", alice, path, query={"order": ["desc"], "limit": ["2"]})
    cursor = first.body["next_cursor"]
    assert cursor
    same = api.call("incident_timeline", alice, path, query={"order": ["desc"], "cursor": [cursor]})
    assert same.status == 200, same.body
    other = api.call("incident_timeline", alice, path, query={"cursor": [cursor]})
    assert (other.status, other.body["code"]) == (400, "invalid_cursor")
    served = json.loads((ROOT / "openapi.json").read_text())
    (order,) = [
        p
        for p in served["paths"]["/incidents/{incident_id}/timeline"]["get"]["parameters"]
        if p["name"] == "order"
    ]
    assert "valid only with the order it was made with" in order["description"]


def test_a_creation_lists_one_entry_per_role(api: Api, alice: Caller) -> None:
    """Issue 40, point 10: ``participants`` of ``incident.created`` holds an entry per role
    (a creator who assigns themself is there twice), ``participant_count`` people."""
    body = {"title": "DB down", "assignees": [alice.user_id]}
    created = api.call("create_incident", alice, body=body)
    assert created.status == 201, created.body
    path = {"incident_id": created.body["summary"]["id"]}
    (event,) = api.call("incident_timeline", alice, path).body["items"]
    roles = sorted(p["role"] for p in event["participants"])
    assert roles == ["assignee", "creator"]
    assert event["participant_count"] == 1


def test_a_first_page_is_conditional_on_the_event_counter(api: Api, alice: Caller) -> None:
    """Issue 40, point 8: a client polling a timeline re-read every event; a first page's
    ETag names the incident's event counter and If-None-Match with it is a 304."""
    incident = new_incident(api, alice)
    path = {"incident_id": incident}
    first = api.call("incident_timeline", alice, path)
    assert (first.status, first.headers["ETag"]) == (200, '"1"')
    same = api.call("incident_timeline", alice, path, headers={"If-None-Match": '"1"'})
    assert (same.status, same.text, same.headers["ETag"]) == (304, "", '"1"')
    note(api, alice, incident, "new")
    moved = api.call("incident_timeline", alice, path, headers={"If-None-Match": '"1"'})
    assert (moved.status, moved.headers["ETag"]) == (200, '"2"')
    assert [e["seq"] for e in moved.body["items"]] == [1, 2]
    paged = api.call("incident_timeline", alice, path, query={"limit": ["1"]})
    cursor = paged.body["next_cursor"]
    later = api.call("incident_timeline", alice, path, query={"limit": ["1"], "cursor": [cursor]})
    assert later.status == 200
    assert "ETag" not in later.headers, "a page with a cursor has no ETag"
