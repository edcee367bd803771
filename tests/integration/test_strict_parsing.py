"""Parsing as strict as the document says, through the real handlers (issue 21): path
parameters matched in full, a canonical `limit`, media types compared without case and JSON
in UTF-8 only, and a team that always keeps a member. Each failed before its fix."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from incidents.keys import teams_partition
from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api, Reply
from tests.helpers.people import new_api_user
from tests.integration.conftest import API_TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

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


def test_a_team_from_before_the_count_is_counted_once(
    api: Api, alice: Caller, dynamodb: DynamoDBClient
) -> None:
    """A team item without `member_count` (written before it was kept) gets it from its
    memberships on the first removal, and the rule holds."""
    team = api.call("create_team", alice, body={"name": "Legacy"}).body["id"]
    bob = new_api_user(api, alice.account_id)
    assert (
        api.call("add_member", alice, {"team_id": team}, body={"user_id": bob.user_id}).status
        == 201
    )
    key = {"PK": {"S": teams_partition(alice.account_id)}, "SK": {"S": team}}
    dynamodb.update_item(TableName=API_TABLE, Key=key, UpdateExpression="REMOVE member_count")
    assert api.call("remove_member", alice, {"team_id": team, "user_id": bob.user_id}).status == 204
    item = dynamodb.get_item(TableName=API_TABLE, Key=key, ConsistentRead=True)["Item"]
    assert item["member_count"] == {"N": "1"}
    assert_error(
        api.call("remove_member", alice, {"team_id": team, "user_id": alice.user_id}),
        409,
        "last_member",
    )


def test_an_add_to_a_team_from_before_the_count_counts_its_members(
    api: Api, alice: Caller, dynamodb: DynamoDBClient
) -> None:
    """The first add to a team without `member_count` counts the members it has (an ADD
    on the missing count started it at 1, so a later removal was refused too early)."""
    team = api.call("create_team", alice, body={"name": "Legacy"}).body["id"]
    bob, carol = new_api_user(api, alice.account_id), new_api_user(api, alice.account_id)
    add = {"team_id": team}
    assert api.call("add_member", alice, add, body={"user_id": bob.user_id}).status == 201
    key = {"PK": {"S": teams_partition(alice.account_id)}, "SK": {"S": team}}
    dynamodb.update_item(TableName=API_TABLE, Key=key, UpdateExpression="REMOVE member_count")
    assert api.call("add_member", alice, add, body={"user_id": carol.user_id}).status == 201
    item = dynamodb.get_item(TableName=API_TABLE, Key=key, ConsistentRead=True)["Item"]
    assert item["member_count"] == {"N": "3"}
    for leaving in (alice, bob):
        removal = {"team_id": team, "user_id": leaving.user_id}
        assert api.call("remove_member", leaving, removal).status == 204


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


@pytest.mark.parametrize(
    ("name", "body", "field"),
    [
        ("create_incident", {"title": "\u202eexe.live"}, "body.title"),
        ("create_incident", {"title": "\u200b\u200d\ufeff"}, "body.title"),
        ("create_team", {"name": "a\x1b[2Jb"}, "body.name"),
        ("save_profile", {"name": "Ada", "email": "a\x00@b\x00"}, "body.email"),
    ],
)
def test_unreadable_text_is_a_400_naming_the_field(
    api: Api, alice: Caller, name: str, body: dict[str, str], field: str
) -> None:
    reply = api.call(name, alice, body=body)
    assert_error(reply, 400, "validation_error")
    assert reply.body["message"].startswith(field), reply.body


def test_composed_and_decomposed_titles_are_stored_alike(api: Api, alice: Caller) -> None:
    titles = [
        api.call("create_incident", alice, body={"title": title}).body["summary"]["title"]
        for title in ("Caf\u00e9", "Cafe\u0301")
    ]
    assert titles == ["Caf\u00e9", "Caf\u00e9"]


@pytest.mark.parametrize(
    ("name", "path", "query"),
    [
        ("incident_timeline", True, {"since": ["2026-01-01T00:00:00Z"]}),
        ("my_incidents", False, {"bogus": ["1"]}),
        ("get_incident", True, {"order": ["asc"]}),
        ("account_events", False, {"Limit": ["5"]}),
    ],
)
def test_a_query_parameter_an_operation_does_not_take_is_400(
    api: Api, alice: Caller, name: str, path: bool, query: dict[str, list[str]]
) -> None:
    """Issue 41, point 7: ``since`` on an incident's timeline was silently ignored (a client
    believed it filtered); every route now names what it does not take, and what it takes."""
    created = api.call("create_incident", alice, body={"title": "t"})
    params = {"incident_id": created.body["summary"]["id"]} if path else None
    reply = api.call(name, alice, params, query=query)
    assert_error(reply, 400, "validation_error")
    (unknown,) = query
    assert f"query.{unknown}: not a parameter of this operation" in reply.body["message"]


def test_a_single_valued_parameter_given_twice_says_so(api: Api, alice: Caller) -> None:
    """``order=asc&order=desc`` was answered with the hint about + meaning a space."""
    reply = api.call("account_events", alice, query={"order": ["asc", "desc"]})
    assert_error(reply, 400, "validation_error")
    assert "given 2 times: it takes one value" in reply.body["message"]
    assert "%2B" not in reply.body["message"]
