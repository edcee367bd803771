"""Tenant isolation: two accounts whose users have the same ids; nothing of B is reachable
from A by any route, id or cursor, and identity in the request itself is ignored."""

from __future__ import annotations

import pytest

from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api

pytestmark = pytest.mark.integration


@pytest.fixture
def tenants(api: Api) -> tuple[Caller, Caller, dict[str, str]]:
    """A and B share a user id; B has a team and an incident on it."""
    shared_user = new_id("user")
    a, b = Caller(new_id("acct"), shared_user), Caller(new_id("acct"), shared_user)
    team = api.call("create_team", b, body={"name": "B team"}).body["id"]
    api.call("save_profile", b, body={"name": "B user"})
    created = api.call("create_incident", b, body={"title": "B secret", "teams": [team]}).body
    return a, b, {"team": team, "incident": created["summary"]["id"]}


def test_b_ids_are_not_found_from_a(
    api: Api, tenants: tuple[Caller, Caller, dict[str, str]]
) -> None:
    a, b, ids = tenants
    incident = {"incident_id": ids["incident"]}
    replies = {
        "get": api.call("get_incident", a, incident),
        "update": api.call("update_incident", a, incident, body={"title": "pwned"}),
        "resolve": api.call("resolve_incident", a, incident),
        "add participant": api.call(
            "add_participant", a, incident, body={"participant_id": a.user_id, "role": "responder"}
        ),
        "remove participant": api.call(
            "remove_participant", a, {**incident, "participant_id": a.user_id}
        ),
        "team list": api.call("team_incidents", a, {"team_id": ids["team"]}),
        "add member": api.call(
            "add_member", a, {"team_id": ids["team"]}, body={"user_id": a.user_id}
        ),
        "profile": api.call("get_profile", a, {"user_id": b.user_id}),
        "create on B's team": api.call(
            "create_incident", a, body={"title": "x", "teams": [ids["team"]]}
        ),
    }
    for what, reply in replies.items():
        assert reply.status == 404, (what, reply.body)
    assert api.call("my_teams_incidents", a, query={"team": [ids["team"]]}).status == 403


def test_a_lists_show_nothing_of_b(
    api: Api, tenants: tuple[Caller, Caller, dict[str, str]]
) -> None:
    a, b, ids = tenants
    for name in ("my_incidents", "my_teams_incidents", "account_incidents"):
        assert api.call(name, a).body["items"] == [], name
        assert [i["id"] for i in api.call(name, b).body["items"]] == [ids["incident"]], name
    assert api.call("my_teams", a).body["items"] == []
    b_view = api.call("get_incident", b, {"incident_id": ids["incident"]})
    assert b_view.body["summary"]["title"] == "B secret", "A's attempts changed nothing"


def test_cursors_do_not_cross_accounts_routes_or_filters(
    api: Api, tenants: tuple[Caller, Caller, dict[str, str]]
) -> None:
    a, b, _ = tenants
    api.call("create_incident", b, body={"title": "second"})
    page = api.call("account_incidents", b, query={"limit": ["1"]}).body
    cursor = page["next_cursor"]
    assert cursor
    assert api.call("account_incidents", b, query={"cursor": [cursor]}).status == 200
    for caller, name, query in [
        (a, "account_incidents", {}),
        (b, "account_incidents", {"state": ["CLOSED"]}),
        (b, "my_incidents", {}),
        (Caller(b.account_id, new_id("user")), "account_incidents", {}),
    ]:
        reply = api.call(name, caller, query={**query, "cursor": [cursor]})
        assert (reply.status, reply.body["code"]) == (400, "invalid_cursor"), (name, query)


def test_identity_only_comes_from_the_authorizer(
    api: Api, tenants: tuple[Caller, Caller, dict[str, str]]
) -> None:
    a, b, _ = tenants
    smuggled = api.call("create_incident", a, body={"title": "x", "account_id": b.account_id})
    assert smuggled.status == 400, "unknown body fields are refused"
    query = {"account_id": [b.account_id], "user_id": [b.user_id]}
    refused = api.call("account_incidents", a, query=query)
    assert (refused.status, refused.body["code"]) == (400, "validation_error")
    assert "query.account_id: not a parameter" in refused.body["message"]
    headers = {"X-Account-Id": b.account_id}
    assert api.call("account_incidents", a, headers=headers).body["items"] == []
    for forged in (
        {"account_id": "acct_x", "user_id": a.user_id},
        {"account_id": a.user_id, "user_id": a.user_id},
        {"account_id": a.account_id, "user_id": a.account_id},
        {"account_id": f"{a.account_id}#x", "user_id": a.user_id},
        {"account_id": a.account_id, "user_id": new_id("key")},  # a key needs its scopes
        {"custom:account_id": a.account_id, "custom:user_id": a.user_id},  # Cognito's claims
    ):
        assert api.call("account_incidents", None, authorizer=forged).status == 401
