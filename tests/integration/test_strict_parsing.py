"""Parsing as strict as the document says, through the real handlers (issue 21): path
parameters matched in full, a canonical `limit`, media types compared without case and JSON
in UTF-8 only, and a team that always keeps a member. Each failed before its fix."""

from __future__ import annotations

import pytest

from incidents.store import Caller, new_id
from tests.api_harness import Api, Reply
from tests.people import new_api_user

pytestmark = pytest.mark.integration


@pytest.fixture
def alice(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"), "Alice")


def assert_error(reply: Reply, status: int, code: str) -> None:
    assert (reply.status, reply.body["code"]) == (status, code), reply.body


@pytest.mark.parametrize("suffix", ["\n", "\r\n", "\n\n"])
def test_a_path_id_with_anything_after_it_is_no_route(api: Api, alice: Caller, suffix: str) -> None:
    """Python's ``$`` matched before a final newline, so ``/users/<id>%0A`` (which API Gateway
    passes decoded) was served as ``/users/<id>`` and a DELETE with one removed the
    participant; now no route matches."""
    assert api.call("get_profile", alice, {"user_id": alice.user_id}).status == 200
    assert_error(
        api.call("get_profile", alice, {"user_id": alice.user_id + suffix}), 404, "not_found"
    )
    bob = new_api_user(api, alice.account_id)
    created = api.call("create_incident", alice, body={"title": "t", "assignees": [bob.user_id]})
    incident = created.body["summary"]["id"]
    removal = api.call(
        "remove_participant",
        alice,
        {"incident_id": incident, "participant_id": bob.user_id + suffix},
    )
    assert_error(removal, 404, "not_found")
    participants = api.call("get_incident", alice, {"incident_id": incident}).body["participants"]
    assert bob.user_id in {p["participant_id"] for p in participants}


@pytest.mark.parametrize("limit", ["1.0", "5_0", "+5", " 5", "5 ", "0x10", "\u0665", "05e0"])
def test_limit_is_a_plain_decimal_integer(api: Api, alice: Caller, limit: str) -> None:
    assert_error(api.call("my_incidents", alice, query={"limit": [limit]}), 400, "validation_error")


@pytest.mark.parametrize("limit", ["5", "05", "100"])
def test_limit_in_decimal_digits_is_taken(api: Api, alice: Caller, limit: str) -> None:
    assert api.call("my_incidents", alice, query={"limit": [limit]}).status == 200


@pytest.mark.parametrize(
    "content_type",
    [
        "APPLICATION/JSON",
        "Application/Json; charset=UTF-8",
        'application/json; charset="utf-8"',
        "application/json;charset=utf8",
    ],
)
def test_media_types_and_charsets_are_case_insensitive(
    api: Api, alice: Caller, content_type: str
) -> None:
    reply = api.call(
        "create_incident", alice, raw_body='{"title": "t"}', headers={"Content-Type": content_type}
    )
    assert reply.status == 201, reply.body


@pytest.mark.parametrize("charset", ["latin-1", "utf-16", "iso-8859-1"])
def test_a_json_body_in_another_charset_is_415(api: Api, alice: Caller, charset: str) -> None:
    reply = api.call(
        "create_incident",
        alice,
        raw_body='{"title": "t"}',
        headers={"Content-Type": f"application/json; charset={charset}"},
    )
    assert_error(reply, 415, "unsupported_media_type")


def test_the_last_member_of_a_team_cannot_leave_it(api: Api, alice: Caller) -> None:
    team = api.call("create_team", alice, body={"name": "SRE"}).body["id"]
    me = {"team_id": team, "user_id": alice.user_id}
    assert_error(api.call("remove_member", alice, me), 409, "last_member")
    bob = new_api_user(api, alice.account_id)
    assert (
        api.call("add_member", alice, {"team_id": team}, body={"user_id": bob.user_id}).status
        == 201
    )
    assert api.call("remove_member", alice, me).status == 204  # bob stays
    bobs = {"team_id": team, "user_id": bob.user_id}
    assert_error(api.call("remove_member", bob, bobs), 409, "last_member")
    assert api.call("team_incidents", bob, {"team_id": team}).status == 200
