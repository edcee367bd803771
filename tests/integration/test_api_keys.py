"""Machine API keys end to end: created by a person, shown once, sent by a machine through
the API's authorizer (the real function, behind the local gateway's model of API Gateway's
authorizer cache), scoped, named as the actor, confined to their account, revoked within
the cache's TTL; and every request taking one from its account's ``api`` quota."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.store import Caller, new_id
from local.api.gateway import LocalGateway
from tests.helpers.api_harness import Api
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration


class Clock:
    """The gateway's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gateway(api: Api, clock: Clock) -> LocalGateway:
    return LocalGateway(api.handlers, {}, clock=clock)


def call(
    gateway: LocalGateway, key: str, method: str, path: str, body: Any = None
) -> tuple[int, dict[str, str], Any]:
    """One request with `key` as a machine sends it; status, headers and parsed body."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    raw = json.dumps(body).encode() if body is not None else b""
    status, answer, payload = gateway.respond(method, path, headers, raw)
    return status, answer, json.loads(payload) if payload else None


def new_key(api: Api, who: Caller, *scopes: str) -> dict[str, Any]:
    reply = api.call("create_api_key", who, body={"name": "ci", "scopes": list(scopes)})
    assert reply.status == 201, reply.body
    return dict(reply.body)


def test_a_key_is_shown_once_and_stored_only_as_its_hash(api: Api, alice: Caller) -> None:
    created = new_key(api, alice, "incidents:read", "incidents:read")
    assert created["key"].startswith("mk_")
    assert created["key_hint"] == created["key"][-4:]
    assert created["scopes"] == ["incidents:read"], "each scope once"
    shown = api.call("get_api_key", alice, {"key_id": created["id"]}).body
    assert "key" not in shown
    listed = api.call("list_api_keys", alice).body["items"]
    assert [k["id"] for k in listed] == [created["id"]]
    stored = json.dumps(api.call("list_api_keys", alice).body)
    assert created["key"] not in stored
    refused = api.call("create_api_key", alice, body={"name": "x", "scopes": ["root"]})
    assert (refused.status, refused.body["code"]) == (400, "validation_error")
    assert api.call("create_api_key", alice, body={"name": "x", "scopes": []}).status == 400


def test_a_key_calls_what_its_scopes_allow_and_acts_as_itself(
    api: Api, alice: Caller, gateway: LocalGateway
) -> None:
    reader = new_key(api, alice, "incidents:read")
    writer = new_key(api, alice, "incidents:read", "incidents:write")
    status, _, created = call(gateway, writer["key"], "POST", "/incidents", {"title": "CI failed"})
    assert status == 201, created
    assert created["summary"]["created_by"] == writer["id"], "the key is the actor"
    incident = created["summary"]["id"]
    status, _, timeline = call(gateway, reader["key"], "GET", f"/incidents/{incident}/timeline")
    assert status == 200
    assert {event["actor"]["user_id"] for event in timeline["items"]} == {writer["id"]}
    participants = api.call("get_incident", alice, {"incident_id": incident}).body["participants"]
    assert participants == [], "a key acts but takes no part"
    status, _, refused = call(gateway, reader["key"], "POST", "/incidents", {"title": "x"})
    assert (status, refused["code"]) == (403, "forbidden")
    assert refused["message"] == "this API key lacks the scope incidents:write"
    for method, path in [("GET", "/me/incidents"), ("GET", "/api-keys"), ("GET", "/webhooks")]:
        status, _, refused = call(gateway, writer["key"], method, path)
        assert (status, refused["code"]) == (403, "forbidden"), path


def test_a_key_never_reads_another_account(api: Api, alice: Caller, gateway: LocalGateway) -> None:
    bob = Caller(new_id("acct"), new_id("user"))
    bobs = api.call("create_incident", bob, body={"title": "bob's"}).body["summary"]["id"]
    key = new_key(api, alice, "incidents:read")["key"]
    status, _, body = call(gateway, key, "GET", f"/incidents/{bobs}")
    assert (status, body["code"]) == (404, "not_found")
    status, _, page = call(gateway, key, "GET", "/incidents?state=OPEN")
    assert status == 200
    assert bobs not in json.dumps(page)


def test_a_revoked_key_stops_when_the_authorizer_cache_lapses(
    api: Api, alice: Caller, gateway: LocalGateway, clock: Clock
) -> None:
    created = new_key(api, alice, "incidents:read")
    assert call(gateway, created["key"], "GET", "/incidents")[0] == 200
    assert api.call("revoke_api_key", alice, {"key_id": created["id"]}).status == 204
    clock.now += 59
    assert call(gateway, created["key"], "GET", "/incidents")[0] == 200, "API Gateway's cache"
    clock.now += 2
    status, _, body = call(gateway, created["key"], "GET", "/incidents")
    assert (status, body["code"]) == (401, "unauthorized"), "past the 60 s TTL"
    assert api.call("get_api_key", alice, {"key_id": created["id"]}).status == 404
    unknown = "mk_" + "A" * 43
    assert call(gateway, unknown, "GET", "/incidents")[0] == 401, "the same answer as unknown"


def test_last_use_is_noted(api: Api, alice: Caller, gateway: LocalGateway) -> None:
    created = new_key(api, alice, "teams:read")
    assert created["last_used_at"] is None
    call(gateway, created["key"], "GET", f"/users/{alice.user_id}")
    shown = api.call("get_api_key", alice, {"key_id": created["id"]}).body
    assert shown["last_used_at"] is not None


def test_an_account_over_its_api_quota_gets_429s_and_another_account_does_not(
    api: Api, alice: Caller, set_quotas: Callable[..., None]
) -> None:
    set_quotas(API_REQUESTS_PER_MINUTE=4)
    replies = [api.call("account_incidents", alice, query={"state": ["OPEN"]}) for _ in range(6)]
    assert [reply.status for reply in replies] == [200] * 4 + [429] * 2
    assert replies[0].headers["RateLimit-Policy"] == '"api";q=4;w=60'
    assert replies[0].headers["RateLimit"].startswith('"api";r=3;')
    refused = replies[-1]
    assert refused.body["code"] == "rate_limited"
    assert refused.body["message"].startswith('rate limit "api": 4 requests a minute')
    assert 1 <= int(refused.headers["Retry-After"]) <= 15
    bob = Caller(new_id("acct"), new_id("user"))
    assert api.call("account_incidents", bob, query={"state": ["OPEN"]}).status == 200


def test_a_key_acts_on_the_accounts_teams_as_its_scope_says(
    api: Api, alice: Caller, gateway: LocalGateway
) -> None:
    """A key is no member of any team: `teams:write` lets it make teams and add and remove
    members in any team of its account, `incidents:read` read any team's incidents."""
    bob = Caller(alice.account_id, new_id("user"))
    for person, name in ((alice, "Alice"), (bob, "Bob")):
        assert api.call("save_profile", person, body={"name": name}).status == 200
    teams = new_key(api, alice, "teams:write")
    status, _, team = call(gateway, teams["key"], "POST", "/teams", {"name": "Payments"})
    assert (status, team["created_by"]) == (201, teams["id"]), team
    members = f"/teams/{team['id']}/members"
    status, _, added = call(gateway, teams["key"], "POST", members, {"user_id": bob.user_id})
    assert status == 201, added
    status, _, listed = call(gateway, teams["key"], "POST", members, {"user_id": alice.user_id})
    assert status == 201, listed
    status, _, _ = call(gateway, teams["key"], "DELETE", f"{members}/{bob.user_id}")
    assert status == 204
    reader = new_key(api, alice, "incidents:read")
    path = f"/teams/{team['id']}/incidents?state=OPEN"
    status, _, incidents = call(gateway, reader["key"], "GET", path)
    assert (status, incidents["items"]) == (200, []), incidents
    elsewhere = f"/teams/{new_id('team')}/incidents?state=OPEN"
    assert call(gateway, reader["key"], "GET", elsewhere)[0] == 404, "its own account only"


def test_a_scope_reaches_only_what_it_says(api: Api, alice: Caller, gateway: LocalGateway) -> None:
    """A key that makes an integration holds a key that opens incidents, and a replay sends
    the account's history: each needs the incidents scope as well."""
    manager = new_key(api, alice, "integrations:manage")
    status, _, refused = call(gateway, manager["key"], "POST", "/integrations", {"name": "x"})
    assert (status, refused["message"]) == (403, "this API key lacks the scope incidents:write")
    both = new_key(api, alice, "integrations:manage", "incidents:write")
    assert call(gateway, both["key"], "POST", "/integrations", {"name": "x"})[0] == 201
    hooks = new_key(api, alice, "webhooks:manage")
    hook = api.call("create_webhook", alice, body={"url": "https://hooks.example.com/in"}).body
    replay = f"/webhooks/{hook['id']}/replay"
    since = {"since": "2026-01-01T00:00:00Z"}
    status, _, refused = call(gateway, hooks["key"], "POST", replay, since)
    assert (status, refused["message"]) == (403, "this API key lacks the scope incidents:read")


def test_a_key_causes_and_reads_only_what_its_scopes_grant(
    api: Api, alice: Caller, gateway: LocalGateway
) -> None:
    """The round-6 reaches: a key for integrations made a heartbeat whose expiry opened an
    incident, set timeouts that resolved them and read suppressed alerts' text; a key for
    webhooks registered one and received every incident. Each needs the incidents' scope."""
    integration = api.call("create_integration", alice, body={"name": "CI"}).body["id"]
    window = api.call(
        "create_maintenance_window", alice,
        body={"integration_id": integration, "start_time": "2099-01-01T00:00:00Z",
              "end_time": "2099-01-02T00:00:00Z", "description": "upgrade"},
    ).body  # fmt: skip
    asks: dict[str, list[tuple[str, str, dict[str, Any] | None]]] = {
        "integrations:manage": [
            ("POST", "/heartbeats", {"name": "nightly", "interval": 1, "interval_unit": "minutes",
                                     "integration_id": integration}),
            ("PATCH", f"/integrations/{integration}", {"auto_resolve_timeout": 60}),
            ("GET", f"/maintenance-windows/{window['id']}/alerts", None),
            ("POST", "/maintenance-windows", {"integration_id": integration,
                                              "start_time": "2099-02-01T00:00:00Z",
                                              "end_time": "2099-02-02T00:00:00Z",
                                              "description": "failover"}),
        ],
        "webhooks:manage": [
            ("POST", "/webhooks", {"url": "https://hooks.example.com/x",
                                   "event_types": ["incident.created"]}),
        ],
    }  # fmt: skip
    also = {"POST": "incidents:write", "PATCH": "incidents:write", "GET": "incidents:read"}
    for scope, requests in asks.items():
        alone = new_key(api, alice, scope)["key"]
        for method, path, body in requests:
            status, _, refused = call(gateway, alone, method, path, body)
            assert (status, refused["code"]) == (403, "forbidden"), (scope, path, refused)
            needed = "incidents:read" if scope == "webhooks:manage" else also[method]
            assert refused["message"] == f"this API key lacks the scope {needed}", path
            both = new_key(api, alice, scope, needed)["key"]
            status, _, answer = call(gateway, both, method, path, body)
            assert status in (200, 201), (path, answer)


def test_handoffs_are_read_only_with_the_schedules_scope(api: Api, gateway: LocalGateway) -> None:
    """A schedule's handoff says who is on call: ``GET /events`` leaves it out for a key
    without ``schedules:read`` (403 if named), and such a key may not point a webhook of
    handoffs (every type, or named) anywhere."""
    ada = new_api_user(api, new_id("acct"), "Ada")
    bob = new_api_user(api, ada.account_id, "Bob")
    layer = {"name": "Primary", "start": "2026-01-05T00:00:00Z",
             "users": [{"user_id": ada.user_id}],
             "rotation_virtual_start": "2026-01-05T09:00:00Z",
             "rotation_turn_length_seconds": 86_400}  # fmt: skip
    body = {"name": "Payments", "time_zone": "UTC", "schedule_layers": [layer]}
    schedule = api.call("create_schedule", ada, body=body).body["id"]
    now = datetime.now(UTC)
    cover = {"start": now.isoformat(), "end": (now + timedelta(hours=1)).isoformat(),
             "user_id": bob.user_id}  # fmt: skip
    assert api.call("create_override", ada, {"schedule_id": schedule}, body=cover).status == 201
    incidents_only = new_key(api, ada, "incidents:read")["key"]
    both = new_key(api, ada, "incidents:read", "schedules:read")["key"]
    _, _, shown = call(gateway, both, "GET", "/events")
    assert [e["type"] for e in shown["items"]] == ["schedule.handoff"]
    _, _, hidden = call(gateway, incidents_only, "GET", "/events")
    assert hidden["items"] == []
    status, _, refused = call(gateway, incidents_only, "GET", "/events?type=schedule.handoff")
    assert (status, refused["code"]) == (403, "forbidden")
    hooks = new_key(api, ada, "webhooks:manage", "incidents:read")["key"]
    url = "https://hooks.example.com/in"
    status, _, refused = call(gateway, hooks, "POST", "/webhooks", {"url": url})
    assert (status, refused["code"]) == (403, "forbidden"), refused
    assert "schedules:read" in refused["message"]
    types = {"url": url, "event_types": ["incident.created"]}
    status, _, made = call(gateway, hooks, "POST", "/webhooks", types)
    assert status == 201, made
    every = {"event_types": None}
    status, _, _ = call(gateway, hooks, "PATCH", f"/webhooks/{made['id']}", every)
    assert status == 403
    hook = api.call("create_webhook", ada, body={"url": url}).body  # a person's: every type
    for method, path, sent in [("PATCH", f"/webhooks/{hook['id']}", {"url": url + "2"}),
                               ("POST", f"/webhooks/{hook['id']}/replay",
                                {"since": "2026-01-01T00:00:00Z"})]:  # fmt: skip
        status, _, refused = call(gateway, hooks, method, path, sent)
        assert (status, refused["code"]) == (403, "forbidden"), path
