"""Integrations and ``POST /alerts`` through the alerts handler (issue 39, points 1-2 over
HTTP): a user manages the account's integrations; a monitoring tool sends alerts with the
key, as a bearer token or as PagerDuty's ``routing_key``."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from incidents.items import MAX_DETAILS_BYTES
from incidents.store import Caller, new_id
from lambdas.routes import ALERT_MAX_BYTES
from tests.helpers.api_harness import Api, Reply

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def new_integration(api: Api, who: Caller, **body: Any) -> dict[str, Any]:
    reply = api.call("create_integration", who, body={"name": "prometheus", **body})
    assert reply.status == 201, reply.body
    assert reply.headers["Location"].endswith(f"/integrations/{reply.body['id']}")
    return reply.body  # type: ignore[no-any-return]


def alert(api: Api, key: str | None, **body: Any) -> Reply:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return api.call("send_alert", None, body=body, headers=headers)


OK_PAYLOAD = {"summary": "disk full", "source": "db-1", "severity": "error"}


def trigger(api: Api, key: str, dedup_key: str, summary: str = "disk full") -> Reply:
    payload = {"summary": summary, "source": "db-1", "severity": "error"}
    return alert(api, key, event_action="trigger", dedup_key=dedup_key, payload=payload)


def test_an_integration_s_life_over_http(api: Api, alice: Caller) -> None:
    team = api.call("create_team", alice, body={"name": "Payments"}).body
    created = new_integration(api, alice, team_id=team["id"], default_severity="SEV2")
    assert created["key"].startswith("ik_")
    assert created["key_hint"] == created["key"][-4:]
    shown = api.call("get_integration", alice, {"integration_id": created["id"]}).body
    assert "key" not in shown
    assert shown["team_id"] == team["id"]
    listed = api.call("list_integrations", alice).body["items"]
    assert [i["id"] for i in listed] == [created["id"]]
    path = {"integration_id": created["id"]}
    renamed = api.call("update_integration", alice, path, body={"name": "alertmanager"})
    assert (renamed.status, renamed.body["name"]) == (200, "alertmanager")
    empty = api.call("update_integration", alice, path, body={})
    assert (empty.status, empty.body["code"]) == (400, "validation_error")
    for timeout in ("auto_resolve_timeout", "acknowledgement_timeout"):
        timed = api.call("update_integration", alice, path, body={timeout: 3600})
        assert (timed.status, timed.body[timeout]) == (200, 3600)
        untimed = api.call("update_integration", alice, path, body={timeout: None})
        assert untimed.body[timeout] is None
        too_soon = api.call("update_integration", alice, path, body={timeout: 5})
        assert (too_soon.status, too_soon.body["code"]) == (400, "validation_error")
    grouping = {"type": "content_based", "fields": ["source"], "aggregate": "any"}
    grouped = api.call("update_integration", alice, path, body={"alert_grouping": grouping})
    assert grouped.body["alert_grouping"] == {**grouping, "time_window": None}
    for refused in (None, {"type": "time", "time_window": 120}, {"type": "content_based"}):
        bad = api.call("update_integration", alice, path, body={"alert_grouping": refused})
        assert (bad.status, bad.body["code"]) == (400, "validation_error"), refused
    assert (
        api.call("get_integration", alice, path).body["alert_grouping"]
        == grouped.body["alert_grouping"]
    ), "stored"
    rotated = api.call("rotate_integration_key", alice, path).body
    assert trigger(api, created["key"], "k").status == 401
    assert trigger(api, rotated["key"], "k").status == 202
    assert api.call("delete_integration", alice, path).status == 204
    gone = trigger(api, rotated["key"], "k")
    assert (gone.status, gone.body["code"]) == (401, "unauthorized")
    assert api.call("get_integration", alice, path).status == 404


def test_another_account_never_sees_an_integration(api: Api, alice: Caller) -> None:
    created = new_integration(api, alice)
    mallory = Caller(new_id("acct"), new_id("user"))
    path = {"integration_id": created["id"]}
    assert api.call("get_integration", mallory, path).status == 404
    assert api.call("delete_integration", mallory, path).status == 404
    assert api.call("list_integrations", mallory).body["items"] == []
    missing_team = api.call(
        "create_integration", alice, body={"name": "x", "team_id": new_id("team")}
    )
    assert (missing_team.status, missing_team.body["code"]) == (404, "not_found")


def test_alerts_open_join_acknowledge_and_resolve_an_incident(api: Api, alice: Caller) -> None:
    key = new_integration(api, alice)["key"]
    opened = trigger(api, key, "db-1/disk")
    assert opened.status == 202, opened.body
    assert opened.body["status"] == "opened"
    incident = opened.body["incident_id"]
    summary = api.call("get_incident", alice, {"incident_id": incident}).body["summary"]
    assert (summary["title"], summary["severity"]) == ("disk full", "SEV2")
    joined = alert(
        api,
        None,
        routing_key=key,
        event_action="trigger",
        dedup_key="db-1/disk",
        payload={"summary": "still full", "source": "db-1", "severity": "error"},
    )
    assert (joined.status, joined.body["incident_id"]) == (202, incident)
    assert joined.body["status"] == "attached"
    acked = alert(api, key, event_action="acknowledge", dedup_key="db-1/disk")
    assert acked.body == {"status": "acknowledged", "dedup_key": "db-1/disk",
                          "incident_id": incident}  # fmt: skip
    resolved = alert(api, key, event_action="resolve", dedup_key="db-1/disk")
    assert resolved.body["status"] == "resolved"
    summary = api.call("get_incident", alice, {"incident_id": incident}).body["summary"]
    assert summary["status"] == "RESOLVED"
    unknown = alert(api, key, event_action="resolve", dedup_key="never-sent")
    assert (unknown.status, unknown.body["incident_id"]) == (202, None)


def test_a_key_s_alerts_reach_the_timeline_at_once_then_once_a_minute(
    api: Api, alice: Caller
) -> None:
    key = new_integration(api, alice)["key"]
    incident = trigger(api, key, "noisy").body["incident_id"]
    trigger(api, key, "noisy", "noise again")
    trigger(api, key, "noisy", "and again")
    reply = api.call("incident_timeline", alice, {"incident_id": incident})
    received = [e for e in reply.body["items"] if e["type"] == "alert.received"]
    assert [(e["alert"]["alerts"], e["alert"]["summary"]) for e in received] == [
        (1, "noise again")
    ], "the first alert to join is noted; the next, within the minute, is only counted"
    assert received[0]["actor"]["user_id"].startswith("intg_")


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"event_action": "trigger", "payload": {"summary": "x"}}, "payload.source"),
        ({"event_action": "explode", "dedup_key": "k"}, "event_action"),
        ({"event_action": "resolve"}, "dedup_key"),
        (
            {
                "event_action": "trigger",
                "payload": {"summary": "x", "source": "s", "severity": "fatal"},
            },
            "severity",
        ),
        (
            {"event_action": "trigger", "payload": {**OK_PAYLOAD, "source": "db\u202e1"}},
            "payload.source",
        ),
        (
            {"event_action": "trigger", "payload": OK_PAYLOAD, "dedup_key": "\u200b"},
            "dedup_key",
        ),
        (
            {
                "event_action": "trigger",
                "payload": OK_PAYLOAD,
                "links": [{"href": "javascript:alert(1)"}],
            },
            "links.0.href",
        ),
        (
            {
                "event_action": "trigger",
                "payload": OK_PAYLOAD,
                "images": [{"src": "http://grafana.example.com/panel.png"}],
            },
            "images.0.src",
        ),
        (
            {"event_action": "trigger", "payload": OK_PAYLOAD, "client_url": "data:text/html,x"},
            "client_url",
        ),
    ],
)
def test_a_bad_alert_is_a_400_naming_the_field(
    api: Api, alice: Caller, body: dict[str, Any], says: str
) -> None:
    key = new_integration(api, alice)["key"]
    reply = alert(api, key, **body)
    assert (reply.status, reply.body["code"]) == (400, "validation_error")
    assert says in reply.body["message"]


def test_an_unknown_key_and_no_key_are_the_same_401(api: Api) -> None:
    body = {"event_action": "resolve", "dedup_key": "k"}
    unknown = alert(api, "ik_" + "A" * 43, **body)
    missing = alert(api, None, **body)
    assert unknown.status == missing.status == 401
    assert unknown.body["code"] == missing.body["code"] == "unauthorized"


def test_an_alert_above_the_size_limit_is_a_413_and_writes_nothing(api: Api, alice: Caller) -> None:
    key = new_integration(api, alice)["key"]
    details = {"blob": "x" * ALERT_MAX_BYTES}
    payload = {"summary": "big", "source": "s", "severity": "info", "custom_details": details}
    reply = alert(api, key, event_action="trigger", dedup_key="big", payload=payload)
    assert (reply.status, reply.body["code"]) == (413, "payload_too_large")
    listed = api.call("account_incidents", alice, query={"state": ["OPEN"]}).body["items"]
    assert listed == []


@pytest.fixture
def small_quotas(set_quotas: Callable[..., None]) -> None:
    """5 alerts a minute an account, 3 an integration key."""
    set_quotas(ALERTS_PER_MINUTE=5, INTEGRATION_ALERTS_PER_MINUTE=3)


@pytest.mark.usefixtures("small_quotas")
def test_an_account_over_its_alert_quota_gets_429s_and_another_account_does_not(
    api: Api, alice: Caller
) -> None:
    keys = [new_integration(api, alice)["key"] for _ in range(3)]
    replies = [trigger(api, keys[n % 3], f"k{n}") for n in range(7)]
    assert [reply.status for reply in replies] == [202] * 5 + [429] * 2
    policies = '"integration";q=3;w=60, "alerts";q=5;w=60'
    assert replies[0].headers["RateLimit-Policy"] == policies
    assert replies[0].headers["RateLimit"] == '"integration";r=2;t=20, "alerts";r=4;t=12'
    assert [r.headers["RateLimit"].split(", ")[1].split(";")[1] for r in replies[:5]] == [
        "r=4", "r=3", "r=2", "r=1", "r=0"
    ]  # fmt: skip
    refused = replies[-1]
    assert refused.body["code"] == "rate_limited"
    assert 'rate limit "alerts": 5 requests a minute' in refused.body["message"]
    assert 12 < int(refused.headers["Retry-After"]) <= 20, (
        "longer than the alerts quota's interval (60 s / 5): this alert spent its key's last"
        " (60 s / 3), and a retry sooner would meet that quota empty"
    )
    bob = Caller(new_id("acct"), new_id("user"))
    assert trigger(api, new_integration(api, bob)["key"], "k").status == 202, "bob's own quota"


@pytest.mark.usefixtures("small_quotas")
def test_one_integration_key_over_its_quota_leaves_the_account_s_other_keys_alone(
    api: Api, alice: Caller
) -> None:
    runaway, other = (new_integration(api, alice)["key"] for _ in range(2))
    replies = [trigger(api, runaway, f"k{n}") for n in range(4)]
    assert [reply.status for reply in replies] == [202, 202, 202, 429]
    assert 'rate limit "integration": 3 requests a minute' in replies[-1].body["message"]
    assert replies[-1].headers["RateLimit"].startswith('"integration";r=0;')
    assert trigger(api, other, "k").status == 202, "the account's quota has room left"


def test_alertmanager_s_pagerduty_receiver_works_unchanged(api: Api, alice: Caller) -> None:
    """A body as Alertmanager's ``pagerduty_configs`` sends it (Events API v2, the key as
    ``routing_key``, a summary past the title's 200 characters, empty strings for unset
    fields, its own ``client`` fields), pointed at ``POST /alerts`` by its ``url``."""
    key = new_integration(api, alice)["key"]
    recorded = json.loads((DATA / "alertmanager_pagerduty.json").read_text())
    firing = {**recorded, "routing_key": key}
    opened = api.call("send_alert", None, body=firing)
    assert (opened.status, opened.body["status"]) == (202, "opened"), opened.body
    path = {"incident_id": opened.body["incident_id"]}
    incident = api.call("get_incident", alice, path).body
    assert incident["summary"]["title"].startswith("[FIRING:2] DiskAlmostFull")
    assert len(incident["summary"]["title"]) == 200, "clipped to a title, with an ellipsis"
    assert incident["details"]["alert"]["source"] == "Alertmanager"
    resolved = {**firing, "event_action": "resolve"}
    reply = api.call("send_alert", None, body=resolved)
    assert (reply.status, reply.body["status"]) == (202, "resolved")
    assert api.call("get_incident", alice, path).body["summary"]["status"] == "RESOLVED"


def test_an_incident_s_alert_count_is_exact_and_the_account_s_own(api: Api, alice: Caller) -> None:
    key = new_integration(api, alice)["key"]
    incident = trigger(api, key, "counted").body["incident_id"]
    trigger(api, key, "counted", "again")
    trigger(api, key, "counted", "again")  # a retry of the same body: counted once
    path = {"incident_id": incident}
    assert api.call("incident_alerts", alice, path).body == {"incident_id": incident, "alerts": 2}
    person = api.call("create_incident", alice, body={"title": "by hand"}).body["summary"]["id"]
    by_hand = api.call("incident_alerts", alice, {"incident_id": person}).body
    assert by_hand["alerts"] == 0
    mallory = Caller(new_id("acct"), new_id("user"))
    assert api.call("incident_alerts", mallory, path).status == 404


def test_what_monitoring_templates_send_is_made_one_line_not_refused(
    api: Api, alice: Caller
) -> None:
    """Alertmanager's and Grafana's templates put newlines and tabs in a summary, and
    Alertmanager does not retry a 400: every control character becomes a space (the
    summary as sent is kept in the details), in every text field; what cannot be cleaned
    (a bidirectional control) is a 400 naming its field (above)."""
    key = new_integration(api, alice)["key"]
    sent = "[FIRING:1] DiskFull\n\tdb-1: 95%\r\nrunbook: https://runbooks.example.com"
    payload = {**OK_PAYLOAD, "summary": sent, "source": "db\x001", "component": "disk\npg"}
    reply = alert(api, key, event_action="trigger", dedup_key="k\n1", payload=payload)
    assert (reply.status, reply.body["dedup_key"]) == (202, "k 1"), reply.body
    incident = api.call("get_incident", alice, {"incident_id": reply.body["incident_id"]}).body
    title = "[FIRING:1] DiskFull  db-1: 95%  runbook: https://runbooks.example.com"
    assert incident["summary"]["title"] == title
    kept = incident["details"]["alert"]
    assert (kept["summary"], kept["summary_sent"]) == (title, sent)
    assert (kept["source"], kept["component"]) == ("db 1", "disk pg")
    resolved = alert(api, key, event_action="resolve", dedup_key="k\n1")
    assert (resolved.status, resolved.body["status"]) == (202, "resolved"), "the same key"


def test_details_above_what_an_incident_keeps_are_trimmed_with_a_marker(
    api: Api, alice: Caller
) -> None:
    """The route takes PagerDuty's 512 KB, and Alertmanager and Grafana trim only above
    512,000 bytes: an alert that opens an incident keeps its details up to what an
    incident holds, and says what it cut, instead of a 413 (a lost page)."""
    key = new_integration(api, alice)["key"]
    details = {"firing": "a" * 1000, "log": "b" * 400_000, "after": "c", "more": "d"}
    payload = {**OK_PAYLOAD, "custom_details": details}
    reply = alert(api, key, event_action="trigger", dedup_key="big", payload=payload)
    assert (reply.status, reply.body["status"]) == (202, "opened"), reply.body
    incident = api.call("get_incident", alice, {"incident_id": reply.body["incident_id"]}).body
    kept = incident["details"]["alert"]["custom_details"]
    assert kept["firing"] == "a" * 1000, "what fits is kept whole"
    assert kept["log"][:4] + kept["log"][-1] == "bbbb…", "the first one not to fit is cut"
    assert 300_000 < len(kept["log"]) < 400_000
    marker = kept["_trimmed"]
    assert marker["cut_or_dropped"] == ["log", "after", "more"]
    assert marker["sent_bytes"] > 400_000 > marker["kept_bytes"]
    assert len(json.dumps(incident["details"]).encode()) <= MAX_DETAILS_BYTES


def test_images_class_and_client_are_kept_and_tell_alerts_apart(api: Api, alice: Caller) -> None:
    key = new_integration(api, alice)["key"]
    extra = {
        "images": [{"src": "https://grafana.example.com/p.png", "href": "", "alt": "panel"}],
        "client": "Grafana",
        "client_url": "https://grafana.example.com/alerting",
    }
    payload = {**OK_PAYLOAD, "class": "disk", "group": ""}
    first = alert(api, key, event_action="trigger", dedup_key="g", payload=payload, **extra)
    assert first.status == 202, first.body
    incident = api.call("get_incident", alice, {"incident_id": first.body["incident_id"]}).body
    kept = incident["details"]["alert"]
    assert (kept["class"], kept.get("group")) == ("disk", None), "an empty field is unset"
    assert kept["images"] == [{"src": "https://grafana.example.com/p.png", "alt": "panel"}]
    assert (kept["client"], kept["client_url"]) == (extra["client"], extra["client_url"])
    other = {**extra, "client": "Grafana (staging)"}
    alert(api, key, event_action="trigger", dedup_key="g", payload=payload, **other)
    counted = api.call("incident_alerts", alice, {"incident_id": first.body["incident_id"]})
    assert counted.body["alerts"] == 2, "differing only in client: two alerts, not a retry"


def test_a_dedup_key_of_255_characters_of_any_script_opens_and_resolves(
    api: Api, alice: Caller
) -> None:
    """PagerDuty takes 255 characters; in a four-byte script that is 1,020 bytes, past
    DynamoDB's 1,024-byte sort key once the integration's id is added: the key's item
    holds its hash instead."""
    key = new_integration(api, alice)["key"]
    dedup_key = "\U0001d538" * 255
    opened = trigger(api, key, dedup_key)
    assert (opened.status, opened.body["dedup_key"]) == (202, dedup_key), opened.body
    assert trigger(api, key, dedup_key, "again").body["status"] == "attached"
    resolved = alert(api, key, event_action="resolve", dedup_key=dedup_key)
    assert (resolved.status, resolved.body["status"]) == (202, "resolved"), resolved.body


@pytest.mark.parametrize("sent", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_timestamp_past_the_calendar_in_utc_is_a_400(api: Api, alice: Caller, sent: str) -> None:
    key = new_integration(api, alice)["key"]
    payload = {**OK_PAYLOAD, "timestamp": sent}
    reply = alert(api, key, event_action="trigger", dedup_key="edge", payload=payload)
    assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body
    assert "payload.timestamp" in reply.body["message"]
    late = alert(api, key, event_action="resolve", dedup_key="edge", payload={"timestamp": sent})
    assert late.status == 400, late.body


def test_a_trigger_stamped_ahead_of_the_clock_orders_as_now(api: Api, alice: Caller) -> None:
    """A skewed clock, or a local time labelled Z, stamps a trigger an hour ahead: it
    orders as the server's now, so the acknowledge and resolve that follow still move it."""
    key = new_integration(api, alice)["key"]
    ahead = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    opened = alert(
        api, key, event_action="trigger", dedup_key="skew",
        payload={**OK_PAYLOAD, "timestamp": ahead},
    )  # fmt: skip
    assert opened.body["status"] == "opened", opened.body
    now = datetime.now(UTC).isoformat()
    acked = alert(
        api, key, event_action="acknowledge", dedup_key="skew", payload={"timestamp": now}
    )
    assert acked.body["status"] == "acknowledged", acked.body
    resolved = alert(api, key, event_action="resolve", dedup_key="skew")
    assert resolved.body["status"] == "resolved", resolved.body
