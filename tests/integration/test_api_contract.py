"""The API's own contract under adversarial input, through the real handlers.

Each test here failed before its fix: 204s carried a JSON ``null``, cursors were decoded
leniently, input was echoed at any length, ``NaN`` and ``1e999`` were stored as null, and
made-up users could be assigned, added or made members.
"""

from __future__ import annotations

import json

import pytest

from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api, Reply
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration


@pytest.fixture
def alice(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"), "Alice")


def created_incident(api: Api, who: Caller, **body: object) -> str:
    reply = api.call("create_incident", who, body={"title": "t", **body})
    assert reply.status == 201, reply.body
    incident_id: str = reply.body["summary"]["id"]
    return incident_id


def assert_error(reply: Reply, status: int, code: str) -> None:
    assert (reply.status, reply.body["code"]) == (status, code), reply.body


def test_a_204_has_no_body_and_no_content_type(api: Api, alice: Caller) -> None:
    bob = new_api_user(api, alice.account_id)
    incident = created_incident(api, alice, assignees=[bob.user_id])
    team = api.call("create_team", alice, body={"name": "SRE"}).body["id"]
    assert api.call("add_member", alice, {"team_id": team}, body={"user_id": bob.user_id})
    removals = [
        api.call(
            "remove_participant", alice, {"incident_id": incident, "participant_id": bob.user_id}
        ),
        api.call("remove_member", alice, {"team_id": team, "user_id": bob.user_id}),
    ]
    for reply in removals:
        assert reply.status == 204
        assert reply.text == ""
        assert "Content-Type" not in reply.headers


def test_a_cursor_is_one_exact_string(api: Api, alice: Caller) -> None:
    for n in range(3):
        created_incident(api, alice, title=f"i{n}")
    first = api.call("my_incidents", alice, query={"limit": ["1"]})
    cursor = first.body["next_cursor"]
    assert api.call("my_incidents", alice, query={"limit": ["1"], "cursor": [cursor]}).status == 200
    for variant in ["", cursor + "!!!", cursor[:4] + "." + cursor[4:], cursor + "====",
                    " " + cursor, cursor + "\n"]:  # fmt: skip
        reply = api.call("my_incidents", alice, query={"limit": ["1"], "cursor": [variant]})
        assert_error(reply, 400, "invalid_cursor")


def test_no_error_echoes_a_large_input(api: Api, alice: Caller) -> None:
    huge = "x" * 10_000
    team = api.call("my_teams_incidents", alice, query={"team": [huge]})
    assert_error(team, 400, "validation_error")
    extra = api.call("create_incident", alice, body={"title": "t", huge: 1})
    assert_error(extra, 400, "validation_error")
    bad_id = api.call("add_member", alice, {"team_id": new_id("team")}, body={"user_id": huge})
    assert_error(bad_id, 400, "validation_error")
    for reply in (team, extra, bad_id):
        assert len(reply.body["message"]) <= 300
        assert "x" * 50 not in reply.body["message"]


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ('{"title": "t", "details": {"a": NaN}}', "NaN"),
        ('{"title": "t", "details": {"a": Infinity}}', "Infinity"),
        ('{"title": "t", "details": {"a": -Infinity}}', "Infinity"),
        ('{"title": "t", "details": {"a": 1e999}}', "out of range"),
        ('{"title": "t", "details": {"a": "\\ud800"}}', "body.details.a"),
        ('{"title": "t", "details": {"\\udfff": 1}}', "surrogate"),
        ('{"title": "t", "details": ' + '{"a": ' * 40 + "1" + "}" * 41, "nested"),
        ('{"title": "t", "details": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
        ("{not json", "not JSON"),
    ],
)
def test_bodies_that_are_not_storable_json_are_400(
    api: Api, alice: Caller, raw: str, says: str
) -> None:
    reply = api.call("create_incident", alice, raw_body=raw)
    assert_error(reply, 400, "invalid_json")
    assert says in reply.body["message"]


def test_users_must_exist_in_the_callers_account(api: Api, alice: Caller) -> None:
    made_up = new_id("user")
    elsewhere = new_api_user(
        api, new_id("acct"), "Mallory"
    ).user_id  # a profile, in another account
    team = api.call("create_team", alice, body={"name": "SRE"}).body["id"]
    incident = created_incident(api, alice)
    for user in (made_up, elsewhere):
        create = api.call("create_incident", alice, body={"title": "t", "assignees": [user]})
        add = api.call(
            "add_participant",
            alice,
            {"incident_id": incident},
            body={"participant_id": user, "role": "responder"},
        )
        member = api.call("add_member", alice, {"team_id": team}, body={"user_id": user})
        for reply in (create, add, member):
            assert_error(reply, 404, "not_found")
            assert user in reply.body["message"]
    listed = api.call("get_incident", alice, {"incident_id": incident})
    assert [p["participant_id"] for p in listed.body["participants"]] == [alice.user_id]


def test_repeated_participants_merge_into_one(api: Api, alice: Caller) -> None:
    """Two operations on one item would make DynamoDB refuse the transaction (a 500 before)."""
    bob = new_api_user(api, alice.account_id)
    team = api.call("create_team", alice, body={"name": "SRE"}).body["id"]
    reply = api.call(
        "create_incident",
        alice,
        body={"title": "t", "assignees": [bob.user_id, bob.user_id], "teams": [team, team]},
    )
    assert reply.status == 201, reply.body
    roles = {p["participant_id"]: p["roles"] for p in reply.body["participants"]}
    assert roles == {alice.user_id: ["creator"], bob.user_id: ["assignee"], team: ["team"]}


def test_the_served_document_says_which_ids_each_field_takes() -> None:
    document = json.loads(open("openapi.json").read())  # noqa: SIM115
    text = json.dumps(document)
    assert "^[a-z]+_" not in text, "no id pattern accepts any prefix"
    schemas = document["components"]["schemas"]
    assert schemas["CreateIncident"]["properties"]["assignees"]["items"]["pattern"].startswith(
        "^user_"
    )
    assert schemas["CreateIncident"]["properties"]["teams"]["items"]["pattern"].startswith("^team_")
    assert schemas["AddMember"]["properties"]["user_id"]["pattern"].startswith("^user_")
    kinds = {"TeamParticipant": "^team_", "UserParticipant": "^user_"}
    for kind, prefix in kinds.items():
        assert schemas[kind]["properties"]["participant_id"]["pattern"].startswith(prefix)
    deletes = document["paths"]["/incidents/{incident_id}/participants/{participant_id}"]["delete"]
    assert deletes["responses"]["204"].get("content", {}) == {}


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "image/png"])
def test_a_body_in_another_media_type_is_415(api: Api, alice: Caller, content_type: str) -> None:
    reply = api.call(
        "create_incident", alice, raw_body='{"title": "t"}', headers={"Content-Type": content_type}
    )
    assert_error(reply, 415, "unsupported_media_type")
