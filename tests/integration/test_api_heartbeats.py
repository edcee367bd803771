"""Heartbeats over HTTP: people manage them, an integration's key pings them (any of
Opsgenie's four methods), and nothing crosses accounts or integrations."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api, Reply

pytestmark = pytest.mark.integration


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def integration(api: Api, who: Caller) -> dict[str, Any]:
    reply = api.call("create_integration", who, body={"name": "cron"})
    assert reply.status == 201, reply.body
    return reply.body  # type: ignore[no-any-return]


def ping(api: Api, method: str, name: str, key: str | None) -> Reply:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return api.call(f"ping_heartbeat_{method}", None, {"name": name}, headers=headers)


def test_a_heartbeat_s_life_over_http(api: Api, alice: Caller) -> None:
    sender = integration(api, alice)
    body = {"name": "nightly-backup", "interval": 2, "interval_unit": "hours",
            "integration_id": sender["id"]}  # fmt: skip
    created = api.call("create_heartbeat", alice, body=body)
    assert created.status == 201, created.body
    assert created.headers["Location"].endswith("/heartbeats/nightly-backup")
    assert (created.body["status"], created.body["last_ping_at"]) == ("active", None)
    again = api.call("create_heartbeat", alice, body=body)
    assert (again.status, again.body["code"]) == (409, "conflict")
    for method in ("get", "post", "put", "patch"):
        pinged = ping(api, method, "nightly-backup", sender["key"])
        assert pinged.status == 202, (method, pinged.body)
        assert pinged.body["status"] == "active"
    shown = api.call("get_heartbeat", alice, {"name": "nightly-backup"}).body
    assert shown["last_ping_at"] is not None
    for odd in ({"enabled": 0}, {"enabled": None}, {"interval": 2.5}, {}):
        refused = api.call("update_heartbeat", alice, {"name": "nightly-backup"}, body=odd)
        assert (refused.status, refused.body["code"]) == (400, "validation_error"), odd
    off = api.call("update_heartbeat", alice, {"name": "nightly-backup"}, body={"enabled": False})
    assert (off.status, off.body["status"], off.body["expires_at"]) == (200, "disabled", None)
    listed = api.call("list_heartbeats", alice, query={"limit": ["1"]}).body
    assert [beat["name"] for beat in listed["items"]] == ["nightly-backup"]
    assert api.call("delete_heartbeat", alice, {"name": "nightly-backup"}).status == 204
    assert api.call("get_heartbeat", alice, {"name": "nightly-backup"}).status == 404


def test_pings_need_the_heartbeat_s_own_integration_key(api: Api, alice: Caller) -> None:
    sender, other = integration(api, alice), integration(api, alice)
    body = {"name": "queue-consumer", "interval": 5, "integration_id": sender["id"]}
    assert api.call("create_heartbeat", alice, body=body).status == 201
    assert ping(api, "get", "queue-consumer", None).status == 401
    assert ping(api, "get", "queue-consumer", "ik_" + "x" * 40).status == 401
    assert ping(api, "post", "queue-consumer", other["key"]).status == 404
    assert ping(api, "post", "no-such-beat", sender["key"]).status == 404
    mallory = Caller(new_id("acct"), new_id("user"))
    assert api.call("get_heartbeat", mallory, {"name": "queue-consumer"}).status == 404
    foreign = {**body, "name": "stolen"}
    refused = api.call("create_heartbeat", mallory, body=foreign)
    assert (refused.status, refused.body["code"]) == (404, "not_found")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"name": "x", "interval": 0}, "interval"),
        ({"name": "x", "interval": 527_041}, "interval"),
        ({"name": "x", "interval": 10**20}, "interval"),
        ({"name": "has space", "interval": 1}, "name"),
        ({"name": "x", "interval": 1, "interval_unit": "weeks"}, "interval_unit"),
    ],
)
def test_a_bad_heartbeat_is_a_400_that_names_the_field(
    api: Api, alice: Caller, body: dict[str, Any], problem: str
) -> None:
    sender = integration(api, alice)
    reply = api.call("create_heartbeat", alice, body={**body, "integration_id": sender["id"]})
    assert (reply.status, reply.body["code"]) == (400, "validation_error")
    assert problem in reply.body["message"]
