"""Change events through the handlers: an integration key posts a change (PagerDuty's
Change Events API body) to ``POST /v2/change/enqueue``; it is kept in the account's change
log, read with ``GET /changes``, newest first, a day a Query, and never opens or moves an
incident."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.alerts.changes import record_change
from incidents.alerts.integrations import authenticate
from incidents.alerts.models import ChangeEvent
from incidents.store import Caller, new_id
from lambdas import runtime
from tests.helpers.api_harness import Api, Reply

pytestmark = pytest.mark.integration


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def change(api: Api, key: str, summary: str, **payload: Any) -> Reply:
    body = {"routing_key": key, "payload": {"summary": summary, "source": "ci", **payload}}
    return api.call("enqueue_change", None, body=body)


def changes(api: Api, who: Caller, **query: str) -> Reply:
    return api.call("list_changes", who, query={k: [v] for k, v in query.items()})


def test_a_change_is_kept_in_the_log_and_opens_nothing(api: Api, alice: Caller) -> None:
    team = api.call("create_team", alice, body={"name": "Payments"}).body
    integration = api.call(
        "create_integration", alice, body={"name": "ci", "team_id": team["id"]}
    ).body
    two_days_ago = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    older = change(api, integration["key"], "deployed checkout 4811", timestamp=two_days_ago)
    assert (older.status, older.body["status"]) == (202, "recorded"), older.body
    newer = change(api, integration["key"], "deployed\ncheckout 4812", custom_details={"n": 2})
    assert newer.status == 202, newer.body
    listed = changes(api, alice)
    assert listed.status == 200, listed.body
    assert [c["summary"] for c in listed.body["items"]] == [
        "deployed checkout 4812",
        "deployed checkout 4811",
    ], "newest first, made one line"
    latest = listed.body["items"][0]
    assert (latest["integration_id"], latest["team_id"]) == (integration["id"], team["id"])
    assert latest["custom_details"] == {"n": 2}
    since = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    recent = changes(api, alice, since=since)
    assert [c["id"] for c in recent.body["items"]] == [newer.body["id"]]
    opened = api.call("account_incidents", alice, query={"state": ["OPEN"]}).body["items"]
    assert opened == [], "a change opens nothing"


def test_changes_are_paged_across_days_and_windows_are_bounded(api: Api, alice: Caller) -> None:
    key = api.call("create_integration", alice, body={"name": "ci"}).body["key"]
    now = datetime.now(UTC)
    for days in range(5):
        change(api, key, f"deploy {days}", timestamp=(now - timedelta(days=days)).isoformat())
    seen: list[str] = []
    cursor = None
    while True:
        query = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        page = changes(api, alice, **query).body
        seen += [c["summary"] for c in page["items"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == [f"deploy {days}" for days in range(5)], "one Query a day, merged in order"
    too_wide = changes(api, alice, since=(now - timedelta(days=40)).isoformat())
    assert (too_wide.status, too_wide.body["code"]) == (400, "validation_error"), too_wide.body
    assert "at most 31 days" in too_wide.body["message"]
    other = Caller(new_id("acct"), new_id("user"))
    assert changes(api, other).body["items"] == [], "another account's log is its own"


def test_a_change_without_a_key_or_a_summary_is_refused(api: Api, alice: Caller) -> None:
    key = api.call("create_integration", alice, body={"name": "ci"}).body["key"]
    unknown = change(api, "ik_" + "A" * 43, "x")
    assert (unknown.status, unknown.body["code"]) == (401, "unauthorized")
    missing = api.call("enqueue_change", None, body={"routing_key": key, "payload": {}})
    assert (missing.status, missing.body["code"]) == (400, "validation_error")
    assert "payload.summary" in missing.body["message"]


def test_a_change_with_details_past_an_item_is_trimmed_not_refused(api: Api, alice: Caller) -> None:
    key = api.call("create_integration", alice, body={"name": "ci"}).body["key"]
    links = [{"href": f"https://ci.example.com/{'x' * 2000}/{n}", "text": "run"} for n in range(20)]
    body = {
        "routing_key": key,
        "payload": {"summary": "big deploy", "custom_details": {"log": "y" * 450_000}},
        "links": links,
    }
    reply = api.call("enqueue_change", None, body=body)
    assert reply.status == 202, reply.body
    (kept,) = changes(api, alice).body["items"]
    assert kept["custom_details"]["log"].endswith("…")
    assert kept["custom_details"]["_trimmed"]["sent_bytes"] > 450_000
    assert len(kept["links"]) == 20


def test_identical_change_events_sent_at_once_are_kept_once(api: Api, alice: Caller) -> None:
    """Issue 66, point 4: 16 copies of one change event at once (a tool retrying on a
    timeout) kept 16 log entries, each round, where 16 copies of an alert count once. The
    copies race where Lambda containers would, in the table: each container serves one
    request at a time (Powertools keeps the request on its router), so they race through
    `record_change`, not through one handler from threads. A copy through the API after
    them is answered 202 with the one change's id."""
    key = api.call("create_integration", alice, body={"name": "ci"}).body["key"]
    store = runtime.store()
    who, integration = authenticate(store, key)
    for round_ in range(5):
        summary = f"deployed checkout {round_}"
        event = ChangeEvent.model_validate(
            {"routing_key": key, "payload": {"summary": summary, "source": "ci"}}
        )
        with ThreadPoolExecutor(16) as pool:
            copies = [pool.submit(record_change, store, who, integration, event) for _ in range(16)]
            recorded = [copy.result() for copy in copies]
        ids = {answer.id for answer in recorded}
        assert len(ids) == 1, f"round {round_}: {len(ids)} changes"
        again = change(api, key, summary)
        assert (again.status, {again.body["id"]}) == (202, ids), again.body
        kept = [c["id"] for c in changes(api, alice).body["items"] if c["summary"] == summary]
        assert kept == list(ids), f"round {round_}: {len(kept)} entries"
