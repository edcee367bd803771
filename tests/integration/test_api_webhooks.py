"""The webhook routes through the real handlers: register (secret shown once), read, list,
change, re-enable, delete, rotate, and every refusal as the API's JSON error."""

from __future__ import annotations

import base64
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from incidents.errors import DomainError
from incidents.events_out.webhooks import (
    MAX_PREVIOUS_SECRETS,
    MAX_WEBHOOKS,
    load_webhook,
    rotate_secret,
)
from incidents.models import parse_timestamp, timestamp
from incidents.store import Caller, new_id
from lambdas import runtime
from tests.helpers.api_harness import Api

pytestmark = pytest.mark.integration
URL = "https://hooks.example.com/incidents"


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def register(api: Api, who: Caller, **body: Any) -> Any:
    return api.call("create_webhook", who, body={"url": URL, **body})


def test_a_webhook_is_registered_with_a_secret_shown_only_then(api: Api, alice: Caller) -> None:
    created = register(api, alice, event_types=["incident.created"], description="Slack")
    assert created.status == 201, created.body
    body = created.body
    assert body["id"].startswith("wh_")
    assert (body["url"], body["event_types"], body["description"]) == (
        URL,
        ["incident.created"],
        "Slack",
    )
    assert body["enabled"] is True
    assert body["secret"].startswith("whsec_")
    assert len(base64.b64decode(body["secret"].removeprefix("whsec_"))) >= 24
    got = api.call("get_webhook", alice, {"webhook_id": body["id"]})
    assert got.status == 200
    assert "secret" not in got.body
    assert got.body == {k: v for k, v in body.items() if k != "secret"} | {"disabled_reason": None}
    listed = api.call("list_webhooks", alice)
    assert [w["id"] for w in listed.body["items"]] == [body["id"]]
    assert "secret" not in listed.body["items"][0]


def test_no_event_types_means_every_type(api: Api, alice: Caller) -> None:
    created = register(api, alice)
    assert created.body["event_types"] is None


def test_another_account_sees_none_of_them(api: Api, alice: Caller) -> None:
    created = register(api, alice).body
    mallory = Caller(new_id("acct"), new_id("user"))
    for name in ("get_webhook", "rotate_webhook_secret", "list_deliveries", "test_webhook"):
        reply = api.call(name, mallory, {"webhook_id": created["id"]})
        assert (reply.status, reply.body["code"]) == (404, "not_found"), name
    patched = api.call(
        "update_webhook", mallory, {"webhook_id": created["id"]}, body={"enabled": False}
    )
    assert patched.status == 404
    deleted = api.call("delete_webhook", mallory, {"webhook_id": created["id"]})
    assert deleted.status == 404
    assert api.call("list_webhooks", mallory).body["items"] == []
    assert api.call("get_webhook", alice, {"webhook_id": created["id"]}).body["enabled"]


def test_any_user_of_the_account_manages_them(api: Api, alice: Caller) -> None:
    created = register(api, alice).body
    bob = Caller(alice.account_id, new_id("user"))
    reply = api.call(
        "update_webhook", bob, {"webhook_id": created["id"]}, body={"description": "bob's"}
    )
    assert (reply.status, reply.body["description"]) == (200, "bob's")


def test_patch_changes_only_what_it_names(api: Api, alice: Caller) -> None:
    created = register(api, alice, event_types=["note.added"], description="d").body
    path = {"webhook_id": created["id"]}
    off = api.call("update_webhook", alice, path, body={"enabled": False})
    assert (off.status, off.body["enabled"], off.body["event_types"]) == (
        200,
        False,
        ["note.added"],
    )
    every = api.call("update_webhook", alice, path, body={"event_types": None, "enabled": True})
    assert (every.body["event_types"], every.body["enabled"]) == (None, True)
    assert every.body["description"] == "d"
    moved = api.call("update_webhook", alice, path, body={"url": "https://other.example.com/h"})
    assert moved.body["url"] == "https://other.example.com/h"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"enabled": None},
        {"url": None},
        {"nope": 1},
        {"event_types": []},
        {"event_types": ["incident.exploded"]},
        {"enabled": 0},
        {"enabled": "true"},
        {"description": ""},
    ],
)
def test_a_bad_patch_is_400(api: Api, alice: Caller, body: dict[str, Any]) -> None:
    created = register(api, alice).body
    reply = api.call("update_webhook", alice, {"webhook_id": created["id"]}, body=body)
    assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/x",
        "https://user:pw@hooks.example.com/x",
        "https://10.0.0.8/x",
        "https://169.254.169.254/latest/meta-data",
        "https://[::ffff:127.0.0.1]/x",
        "https://[fd00:ec2::254]/x",
        "ftp://hooks.example.com/x",
        "https://",
        "https://hooks.example.com:99999/x",
        "https://0x0a000001/x",
        "https://[2002:a9fe:a9fe::1]/x",
        f"https://{'a' * 64}.example.com/x",
        "https://hooks.example.com:22/x",
        "https://hooks.example.com/x\r\nX-Injected: 1",
    ],
)
def test_a_url_deliveries_must_not_go_to_is_refused(api: Api, alice: Caller, url: str) -> None:
    reply = api.call("create_webhook", alice, body={"url": url})
    assert reply.status == 400, reply.body
    assert reply.body["code"] in {"invalid_url", "validation_error"}
    assert api.call("list_webhooks", alice).body["items"] == []


def test_event_types_named_twice_are_kept_once(api: Api, alice: Caller) -> None:
    types = ["note.added", "incident.created", "note.added"]
    body = {"url": "https://hooks.example.com/x", "event_types": types}
    created = api.call("create_webhook", alice, body=body)
    assert created.status == 201, created.body
    assert created.body["event_types"] == ["note.added", "incident.created"]


def test_loopback_is_allowed_only_where_the_stage_says(
    api: Api, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = {"url": "http://127.0.0.1:9000/hooks"}
    assert api.call("create_webhook", alice, body=local).status == 201  # the suites: make dev's
    monkeypatch.setenv("WEBHOOK_ALLOW_LOOPBACK", "0")
    refused = api.call("create_webhook", alice, body=local)
    assert (refused.status, refused.body["code"]) == (400, "invalid_url")
    refused = api.call("create_webhook", alice, body={"url": "https://localhost/x"})
    assert (refused.status, refused.body["code"]) == (400, "invalid_url")


def test_an_account_holds_at_most_twenty(api: Api, alice: Caller) -> None:
    ids = [register(api, alice).body["id"] for _ in range(MAX_WEBHOOKS)]
    over = register(api, alice)
    assert (over.status, over.body["code"]) == (409, "too_many_webhooks")
    assert api.call("delete_webhook", alice, {"webhook_id": ids[0]}).status == 204
    assert register(api, alice).status == 201
    page = api.call("list_webhooks", alice, query={"limit": ["15"]})
    rest = api.call("list_webhooks", alice, query={"cursor": [page.body["next_cursor"]]})
    assert len(page.body["items"]) + len(rest.body["items"]) == MAX_WEBHOOKS
    assert rest.body["has_more"] is False


def test_delete_then_every_route_is_404(api: Api, alice: Caller) -> None:
    created = register(api, alice).body
    path = {"webhook_id": created["id"]}
    deleted = api.call("delete_webhook", alice, path)
    assert (deleted.status, deleted.text) == (204, "")
    assert api.call("delete_webhook", alice, path).status == 404
    assert api.call("get_webhook", alice, path).status == 404


def test_rotation_gives_a_new_secret_and_keeps_the_old_one_a_day(api: Api, alice: Caller) -> None:
    created = register(api, alice).body
    rotated = api.call("rotate_webhook_secret", alice, {"webhook_id": created["id"]})
    assert rotated.status == 200
    assert rotated.body["secret"].startswith("whsec_")
    assert rotated.body["secret"] != created["secret"]
    assert rotated.body["previous_expires_at"] > created["created_at"]


def test_rotations_keep_every_secret_inside_its_day(api: Api, alice: Caller) -> None:
    """Issue 37, point 7: a second rotation within 24 h dropped the original secret at once.
    Every earlier secret signs until its day is over; a fourth live one is refused."""
    created = register(api, alice).body
    path = {"webhook_id": created["id"]}
    secrets = [created["secret"]]
    for _ in range(MAX_PREVIOUS_SECRETS):
        rotated = api.call("rotate_webhook_secret", alice, path)
        assert rotated.status == 200, rotated.body
        secrets.append(rotated.body["secret"])
    stored = load_webhook(runtime.store(), alice.account_id, created["id"])
    assert stored is not None
    now = stored.webhook.created_at
    assert stored.signing_secrets(now) == [secrets[-1], *secrets[:-1]]
    refused = api.call("rotate_webhook_secret", alice, path)
    assert (refused.status, refused.body["code"]) == (409, "too_many_rotations")
    later = timestamp(parse_timestamp(now) + timedelta(hours=25))
    assert stored.signing_secrets(later) == [secrets[-1]]


def test_concurrent_rotations_are_serialized(api: Api, alice: Caller) -> None:
    """Four rotations at once race where Lambda containers would, in the table, through
    `rotate_secret` (a container serves one request at a time: Powertools keeps it on its
    router). One or more win; the others are refused with a code, and every winner kept
    the secret it replaced."""
    created = register(api, alice).body
    store = runtime.store()

    def rotate(_: int) -> str:
        try:
            rotate_secret(store, alice, created["id"])
        except DomainError as refused:
            return refused.code
        return "rotated"

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(rotate, range(4)))
    won = answers.count("rotated")
    assert won, answers
    assert set(answers) <= {"rotated", "conflict", "too_many_rotations"}, answers
    stored = load_webhook(store, alice.account_id, created["id"])
    assert stored is not None
    signing = stored.signing_secrets(stored.webhook.created_at)
    assert created["secret"] in signing, "the original secret still signs"
    assert len(signing) == 1 + won, "each winning rotation kept the secret it replaced"


@pytest.mark.parametrize(
    "since",
    [
        "yesterday",
        "2026-11-24",
        "2026-11-24T08:00:00",
        "0000-00-00T00:00:00Z",
        "2026-02-30T00:00:00Z",
    ],
)
def test_a_replay_needs_an_instant_with_its_offset(api: Api, alice: Caller, since: str) -> None:
    created = register(api, alice).body
    reply = api.call("replay_webhook", alice, {"webhook_id": created["id"]}, body={"since": since})
    assert (reply.status, reply.body["code"]) == (400, "validation_error")


def test_a_malformed_webhook_id_is_400(api: Api, alice: Caller) -> None:
    reply = api.call("get_webhook", alice, {"webhook_id": "wh_nope"})
    assert (reply.status, reply.body["code"]) == (400, "validation_error")
