"""Every route through its real handler and a real proxy event: happy paths and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from dynashard import calculated_shard, sharded_key
from incidents.store import Caller, new_id
from lambdas import runtime
from lambdas.http.idempotency import RECORD_PREFIX, RECORD_SHARDS
from lambdas.http.principal import context_of
from lambdas.routes import Group, Route
from local.api.proxy_events import LocalLambdaContext, proxy_event
from tests.helpers.api_harness import Api
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def create(api: Api, who: Caller, **body: object) -> dict[str, object]:
    reply = api.call("create_incident", who, body={"title": "DB down", **body})
    assert reply.status == 201, reply.body
    return reply.body  # type: ignore[no-any-return]


def test_create_get_update_resolve(api: Api, alice: Caller) -> None:
    created = create(api, alice, severity="SEV1", details={"runbook": "https://x"})
    incident_id = created["summary"]["id"]  # type: ignore[index]
    got = api.call("get_incident", alice, {"incident_id": incident_id})
    assert got.status == 200
    assert got.body["details"] == {"runbook": "https://x"}
    assert got.body["summary"]["state"] == "OPEN"
    updated = api.call(
        "update_incident",
        alice,
        {"incident_id": incident_id},
        body={"status": "ACKNOWLEDGED"},
        headers={"If-Match": '"1"'},
    )
    assert updated.status == 200, updated.body
    assert (updated.body["version"], updated.body["status"]) == (2, "ACKNOWLEDGED")
    resolved = api.call("resolve_incident", alice, {"incident_id": incident_id})
    assert (resolved.status, resolved.body["state"]) == (200, "CLOSED")
    listed = api.call("my_incidents", alice, query={"state": ["CLOSED"]})
    assert [i["id"] for i in listed.body["items"]] == [incident_id]
    assert listed.body["has_more"] is False


def test_errors_are_json_with_the_right_status(api: Api, alice: Caller) -> None:
    created = create(api, alice)
    incident_id = created["summary"]["id"]  # type: ignore[index]
    path = {"incident_id": incident_id}
    cases = [
        (api.call("create_incident", alice, body={"title": ""}), 400, "validation_error"),
        (api.call("create_incident", alice, raw_body="{not json"), 400, "invalid_json"),
        (
            api.call("create_incident", alice, body={"title": "t", "extra": 1}),
            400,
            "validation_error",
        ),
        (api.call("my_incidents", alice, query={"limit": ["0"]}), 400, "validation_error"),
        (api.call("my_incidents", alice, query={"limit": ["101"]}), 400, "validation_error"),
        (api.call("my_incidents", alice, query={"state": ["HALF"]}), 400, "validation_error"),
        (
            api.call("get_incident", alice, {"incident_id": "inc_not-a-ksuid"}),
            400,
            "validation_error",
        ),
        (api.call("my_incidents", alice, query={"cursor": ["garbage"]}), 400, "invalid_cursor"),
        (api.call("get_incident", None, path), 401, "unauthorized"),
        (
            api.call("get_incident", None, path, authorizer={"account_id": alice.account_id}),
            401,
            "unauthorized",
        ),
        (api.call("get_incident", alice, {"incident_id": new_id("inc")}), 404, "not_found"),
        (
            api.call(
                "update_incident", alice, path, body={"title": "x"}, headers={"If-Match": "7"}
            ),
            412,
            "precondition_failed",
        ),
        (
            api.call(
                "update_incident", alice, path, body={"title": "x"}, headers={"If-Match": "v"}
            ),
            400,
            "invalid_if_match",
        ),
        (api.call("update_incident", alice, path, body={}), 400, "validation_error"),
        (
            api.call(
                "create_incident", alice, body={"title": "t", "details": {"x": "a" * 360_000}}
            ),
            413,
            "payload_too_large",
        ),
        (
            api.call(
                "create_incident",
                alice,
                body={"title": "t", "assignees": [new_id("user") for _ in range(99)]},
            ),
            400,
            "too_many_participants",
        ),
    ]
    for reply, status, code in cases:
        assert (reply.status, reply.body["code"]) == (status, code), reply.body
        assert isinstance(reply.body["message"], str)
        assert "Traceback" not in reply.body["message"]
        assert "#" not in reply.body["message"] or code == "validation_error"


def test_teams_and_membership_routes(api: Api, alice: Caller) -> None:
    bob = new_api_user(api, alice.account_id)
    team = api.call("create_team", alice, body={"name": "SRE"})
    assert team.status == 201
    team_id = team.body["id"]
    assert api.call("team_incidents", bob, {"team_id": team_id}).status == 403
    assert (
        api.call("add_member", bob, {"team_id": team_id}, body={"user_id": bob.user_id}).status
        == 403
    )
    added = api.call("add_member", alice, {"team_id": team_id}, body={"user_id": bob.user_id})
    assert added.status == 201
    again = api.call("add_member", alice, {"team_id": team_id}, body={"user_id": bob.user_id})
    assert (again.status, again.body["code"]) == (409, "conflict")
    assert [t["id"] for t in api.call("my_teams", bob).body["items"]] == [team_id]
    created = create(api, alice, teams=[team_id])
    for name, path, query in [
        ("team_incidents", {"team_id": team_id}, {}),
        ("my_teams_incidents", None, {"team": [team_id]}),
        ("my_teams_incidents", None, {}),
        ("account_incidents", None, {"state": ["OPEN"]}),
    ]:
        reply = api.call(name, bob, path, query=query)
        assert reply.status == 200, reply.body
        assert [i["id"] for i in reply.body["items"]] == [created["summary"]["id"]]  # type: ignore[index]
    removed = api.call("remove_member", bob, {"team_id": team_id, "user_id": bob.user_id})
    assert (removed.status, removed.body) == (204, None)
    assert api.call("my_teams_incidents", bob, query={"team": [team_id]}).status == 403
    missing = api.call("team_incidents", alice, {"team_id": new_id("team")})
    assert (missing.status, missing.body["code"]) == (404, "not_found")


def test_participant_routes(api: Api, alice: Caller) -> None:
    created = create(api, alice)
    path = {"incident_id": created["summary"]["id"]}  # type: ignore[index]
    carol = new_api_user(api, alice.account_id).user_id
    added = api.call(
        "add_participant", alice, path, body={"participant_id": carol, "role": "responder"}
    )
    assert (added.status, added.body["roles"]) == (200, ["responder"])
    wrong = api.call("add_participant", alice, path, body={"participant_id": carol, "role": "team"})
    assert wrong.status == 400
    removed = api.call("remove_participant", alice, {**path, "participant_id": carol})
    assert removed.status == 204
    gone = api.call("remove_participant", alice, {**path, "participant_id": carol})
    assert gone.status == 404


def test_adding_a_role_a_participant_has_writes_nothing(api: Api, alice: Caller) -> None:
    """Issue 41, point 6: the same role again is 200 with the participation as it is, and
    no event, no ETag move (before: a ``participant.added`` and ETag "1.2" -> "1.3")."""
    created = create(api, alice)
    path = {"incident_id": created["summary"]["id"]}  # type: ignore[index]
    carol = new_api_user(api, alice.account_id).user_id
    body = {"participant_id": carol, "role": "responder"}
    assert api.call("add_participant", alice, path, body=body).status == 200
    before = api.call("get_incident", alice, path)
    events = api.call("incident_timeline", alice, path).body["items"]
    again = api.call("add_participant", alice, path, body=body)
    assert (again.status, again.body["roles"]) == (200, ["responder"])
    after = api.call("get_incident", alice, path)
    assert after.headers["ETag"] == before.headers["ETag"]
    assert api.call("incident_timeline", alice, path).body["items"] == events
    other_role = api.call("add_participant", alice, path, body={**body, "role": "assignee"})
    assert other_role.body["roles"] == ["assignee", "responder"]
    assert len(api.call("incident_timeline", alice, path).body["items"]) == len(events) + 1


def test_idempotency_key_replays_the_first_result(api: Api, alice: Caller) -> None:
    key = {"Idempotency-Key": new_id("req")}
    first = api.call("create_incident", alice, body={"title": "once"}, headers=key)
    again = api.call("create_incident", alice, body={"title": "once"}, headers=key)
    assert first.status == again.status == 201
    assert again.body == first.body
    other_body = api.call("create_incident", alice, body={"title": "twice"}, headers=key)
    assert (other_body.status, other_body.body["code"]) == (409, "idempotency_key_reused")
    bob = Caller(alice.account_id, new_id("user"))
    bobs = api.call("create_incident", bob, body={"title": "once"}, headers=key)
    assert bobs.body["summary"]["id"] != first.body["summary"]["id"], "keys are per caller"
    listed = api.call("my_incidents", alice)
    assert [i["title"] for i in listed.body["items"]] == ["once"]
    records = runtime.store().client.scan(
        TableName=runtime.table_name(),
        FilterExpression="begins_with(PK, :prefix)",
        ExpressionAttributeValues={":prefix": {"S": "idempotency#"}},
    )["Items"]
    assert records, "records live in the single table under their own prefix"
    for record in records:
        shard = calculated_shard(RECORD_PREFIX, record["SK"]["S"], RECORD_SHARDS)
        assert record["PK"]["S"] == sharded_key(RECORD_PREFIX, shard, RECORD_SHARDS)
    assert all("ExpiresAt" in r for r in records), "and expire through the table's TTL"


def test_unknown_route_is_json_404(api: Api, alice: Caller) -> None:
    event = proxy_event(
        Route("GET", "/nowhere", Group.TEAMS, "not a route"), authorizer=context_of(alice)
    )
    response = api.handlers[Group.TEAMS](event, LocalLambdaContext())
    assert response["statusCode"] == 404
    assert json.loads(response["body"])["code"] == "not_found"


def test_throttling_that_survives_retries_is_429(
    api: Api, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    def throttled(**_: object) -> None:
        raise ClientError(
            {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
            "Query",
        )

    monkeypatch.setattr(runtime.store().client, "get_item", throttled)
    reply = api.call("get_incident", alice, {"incident_id": new_id("inc")})
    assert (reply.status, reply.body["code"]) == (429, "throttled")
    assert reply.headers["Retry-After"] == "1", "a client is told when to try again"


def test_a_dependency_that_does_not_answer_is_503_with_retry_after(
    api: Api, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    def silent(**_: object) -> None:
        raise ReadTimeoutError(endpoint_url="http://dynamodb.invalid")

    monkeypatch.setattr(runtime.store().client, "get_item", silent)
    reply = api.call("get_incident", alice, {"incident_id": new_id("inc")})
    assert (reply.status, reply.body["code"], reply.headers["Retry-After"]) == (
        503,
        "unavailable",
        "5",
    )


def test_a_bug_is_a_bare_500(api: Api, alice: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**_: object) -> None:
        raise RuntimeError("secret internal detail PK=acct#inc#3")

    monkeypatch.setattr(runtime.store().client, "get_item", broken)
    reply = api.call("get_incident", alice, {"incident_id": new_id("inc")})
    assert reply.status == 500
    assert reply.body == {"code": "internal_error", "message": "internal error"}


def test_profile_routes(api: Api, alice: Caller) -> None:
    missing = api.call("get_profile", alice, {"user_id": alice.user_id})
    assert (missing.status, missing.body["code"]) == (404, "not_found")
    saved = api.call("save_profile", alice, body={"name": "Alice", "email": "a@example.com"})
    assert saved.status == 200
    assert saved.body == {"id": alice.user_id, "name": "Alice", "email": "a@example.com",
                          "time_zone": "UTC", "role": "owner"}  # fmt: skip
    bob = Caller(alice.account_id, new_id("user"))
    assert api.call("get_profile", bob, {"user_id": alice.user_id}).body["name"] == "Alice"
    bad = api.call("save_profile", alice, body={"name": "A", "email": "not an email"})
    assert (bad.status, bad.body["code"]) == (400, "validation_error")


def test_a_walk_of_all_my_teams_survives_a_membership_change(api: Api, alice: Caller) -> None:
    """Joining or leaving a team mid-walk: the next page goes on from the cursor's position
    over the new team set. A joined team's incidents behind the position are not shown (as
    any item written behind a cursor), a left team's stop appearing; a named team= set is
    still bound to its cursor."""
    assert api.call("save_profile", alice, body={"name": "Alice"}).status == 200
    bob = Caller(alice.account_id, new_id("user"))
    assert api.call("save_profile", bob, body={"name": "Bob"}).status == 200
    one = api.call("create_team", alice, body={"name": "One"}).body["id"]
    two = api.call("create_team", alice, body={"name": "Two"}).body["id"]
    bobs = api.call("create_team", bob, body={"name": "Bob's"}).body["id"]

    def incident(who: Caller, title: str, team: str) -> str:
        reply = api.call("create_incident", who, body={"title": title, "teams": [team]})
        return str(reply.body["summary"]["id"])

    old_bob = incident(bob, "bob old", bobs)
    older = [incident(alice, f"one {n}", one) for n in range(3)]
    in_two = incident(alice, "two", two)
    newer = [incident(alice, f"one {n}", one) for n in range(3, 6)]
    page = api.call("my_teams_incidents", alice, query={"limit": ["2"]}).body
    assert [i["id"] for i in page["items"]] == newer[::-1][:2]
    # alice leaves Two (bob stays in it: a team keeps a member) and joins Bob's team mid-walk
    assert (
        api.call("add_member", alice, {"team_id": two}, body={"user_id": bob.user_id}).status == 201
    )
    assert (
        api.call("remove_member", alice, {"team_id": two, "user_id": alice.user_id}).status == 204
    )
    added = api.call("add_member", bob, {"team_id": bobs}, body={"user_id": alice.user_id})
    assert added.status == 201
    seen, cursor = [], page["next_cursor"]
    while cursor:
        reply = api.call("my_teams_incidents", alice, query={"limit": ["2"], "cursor": [cursor]})
        assert reply.status == 200, reply.body
        seen += [i["id"] for i in reply.body["items"]]
        cursor = reply.body["next_cursor"]
    assert seen == [newer[0], *older[::-1], old_bob], "Two's incident gone, Bob's team's in"
    assert in_two not in seen
    named = api.call("my_teams_incidents", alice, query={"limit": ["1"], "team": [one]}).body
    other = api.call(
        "my_teams_incidents", alice, query={"team": [one, bobs], "cursor": [named["next_cursor"]]}
    )
    assert (other.status, other.body["code"]) == (400, "invalid_cursor"), "team= stays bound"


def test_each_list_page_emits_its_fan_out_cost(
    api: Api, alice: Caller, capsys: pytest.CaptureFixture[str]
) -> None:
    create(api, alice)
    capsys.readouterr()
    assert api.call("my_incidents", alice).status == 200
    emitted = [
        json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line
    ]
    (metrics,) = [m for m in emitted if "FanOutRequests" in m]
    (directive,) = metrics["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == runtime.metrics.namespace
    (dimensions,) = directive["Dimensions"]  # "service" too where POWERTOOLS_SERVICE_NAME is
    assert set(dimensions) - {"service"} == {"list"}, "the dashboard's per-list graphs"
    assert metrics["list"] == "my_incidents"

    def last(name: str) -> float:
        value = metrics[name]
        return float(value[-1] if isinstance(value, list) else value)

    assert last("FanOutStreams") == 1.0, "one participant partition by default"
    assert last("FanOutRequests") >= 1
    assert last("FanOutItemsRead") >= 1
    assert last("FanOutReadUnits") > 0
    assert last("FanOutContributors") == 1.0, "the caller's own incident, from that partition"
    assert last("FanOutRoundTrips") >= 1
    assert last("FanOutMilliseconds") > 0


def test_an_incident_is_found_by_its_number_with_one_key_read(api: Api, alice: Caller) -> None:
    first = create(api, alice, title="first")
    second = create(api, alice, title="second", details={"runbook": "https://x"})
    number = second["summary"]["number"]  # type: ignore[index]
    assert number == first["summary"]["number"] + 1  # type: ignore[index]
    calls: list[tuple[str, str | None]] = []

    def record(model: Any, params: dict[str, Any], **_: Any) -> None:
        calls.append((model.name, params.get("IndexName")))

    client = runtime.dynamodb()
    client.meta.events.register("provide-client-params.dynamodb", record)
    try:
        found = api.call("get_incident_by_number", alice, {"number": str(number)})
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb", record)
    by_id = api.call("get_incident", alice, {"incident_id": second["summary"]["id"]})  # type: ignore[index]
    assert (found.status, found.body) == (200, by_id.body)
    quota = [call for call in calls if call == ("UpdateItem", None)]
    assert 1 <= len(quota) <= 2, "the account's quota: a second write when it turns busy"
    reads = [call for call in calls if call not in quota]
    assert reads[0] == ("Query", "GSI3"), "the number: one key read on GSI3, no fan-out"
    assert [name for name, _ in reads[1:]] == ["GetItem", "GetItem", "Query"], "then as by id"
    for missing in ("99999", str(number + 1)):
        reply = api.call("get_incident_by_number", alice, {"number": missing})
        assert (reply.status, reply.body["code"]) == (404, "not_found")
    other = Caller(new_id("acct"), new_id("user"))
    elsewhere = api.call("get_incident_by_number", other, {"number": str(number)})
    assert elsewhere.status == 404, "numbers are per account"
    for bad in ("0", "-1", "01", "1.0", "abc", "1e3"):
        reply = api.call("get_incident_by_number", alice, {"number": bad})
        assert (reply.status, reply.body["code"]) == (400, "validation_error"), bad


def walk_ids(api: Api, who: Caller, name: str, **query: str) -> list[str]:
    ids, cursor = [], None
    while True:
        params = {key: [value] for key, value in query.items()}
        reply = api.call(name, who, query=params | ({"cursor": [cursor]} if cursor else {}))
        assert reply.status == 200, reply.body
        ids += [item["id"] for item in reply.body["items"]]
        cursor = reply.body["next_cursor"]
        if not reply.body["has_more"]:
            return ids


@pytest.mark.parametrize("name", ["my_incidents", "account_incidents"])
def test_every_list_pages_oldest_first_and_meets_new_incidents(
    api: Api, alice: Caller, name: str
) -> None:
    created = [create(api, alice, title=f"t{n}")["summary"]["id"] for n in range(5)]  # type: ignore[index]
    assert walk_ids(api, alice, name, limit="2") == created[::-1]
    assert walk_ids(api, alice, name, limit="2", order="asc") == created
    first = api.call(name, alice, query={"limit": ["2"], "order": ["asc"]}).body
    later = create(api, alice, title="while walking")["summary"]["id"]  # type: ignore[index]
    seen, cursor = list(first["items"]), first["next_cursor"]
    while cursor:
        reply = api.call(name, alice, query={"limit": ["2"], "order": ["asc"], "cursor": [cursor]})
        seen += reply.body["items"]
        cursor = reply.body["next_cursor"]
    assert [item["id"] for item in seen] == [*created, later], "created before a page: shown"
    wrong = api.call(name, alice, query={"order": ["desc"], "cursor": [first["next_cursor"]]})
    assert (wrong.status, wrong.body["code"]) == (400, "invalid_cursor"), "bound to the order"
    bad = api.call(name, alice, query={"order": ["oldest"]})
    assert (bad.status, bad.body["code"]) == (400, "validation_error")


def test_lists_take_a_creation_window_read_through_key_conditions(api: Api, alice: Caller) -> None:
    created = [create(api, alice, title=f"t{n}")["summary"] for n in range(4)]
    times = [c["created_at"] for c in created]  # type: ignore[index]
    ids = [c["id"] for c in created]  # type: ignore[index]
    calls: list[dict[str, Any]] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        calls.append(params)

    client = runtime.dynamodb()
    client.meta.events.register("provide-client-params.dynamodb.Query", record)
    try:
        for name in ("my_incidents", "account_incidents"):
            window = {"since": times[1], "until": times[3]}
            assert walk_ids(api, alice, name, limit="1", **window) == [ids[2], ids[1]]
            assert walk_ids(api, alice, name, order="asc", **window) == [ids[1], ids[2]]
            assert walk_ids(api, alice, name, since=times[3]) == [ids[3]]
            assert walk_ids(api, alice, name, until=times[0]) == []
            wide = {"since": "2000-01-01T00:00:00Z", "until": "2100-01-01T00:00:00+02:00"}
            assert walk_ids(api, alice, name, **wide) == ids[::-1]
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb.Query", record)
    assert all("FilterExpression" not in params for params in calls), "key conditions only"
    assert any("BETWEEN" in params["KeyConditionExpression"] for params in calls)
    page = api.call("my_incidents", alice, query={"limit": ["1"], "since": [times[0]]}).body
    other = api.call(
        "my_incidents", alice, query={"since": [times[1]], "cursor": [page["next_cursor"]]}
    )
    assert (other.status, other.body["code"]) == (400, "invalid_cursor"), "bound to the window"
    for bad in (
        {"since": [times[2]], "until": [times[1]]},
        {"since": [times[1]], "until": [times[1]]},
        {"since": ["2026-11-23T10:00:00"]},
        {"until": ["yesterday"]},
        {"until": ["0.5"]},
        {"since": ["2026-13-01T00:00:00Z"]},
        {"since": ["2026-02-30T00:00:00Z"]},
    ):
        reply = api.call("account_incidents", alice, query=bad)
        assert (reply.status, reply.body["code"]) == (400, "validation_error"), bad


@pytest.mark.parametrize("name", ["my_incidents", "account_incidents"])
def test_lists_filter_by_status_and_severity(api: Api, alice: Caller, name: str) -> None:
    made = {}
    for status, severity in [
        ("TRIGGERED", "SEV1"),
        ("ACKNOWLEDGED", "SEV1"),
        ("TRIGGERED", "SEV3"),
        ("ACKNOWLEDGED", "SEV2"),
    ]:
        body = {"title": f"{status} {severity}", "status": status, "severity": severity}
        made[(status, severity)] = create(api, alice, **body)["summary"]["id"]  # type: ignore[index]
    newest_first = list(made.values())[::-1]

    def expect(statuses: set[str], severities: set[str]) -> list[str]:
        return [
            made[key]
            for key in list(made)[::-1]
            if (not statuses or key[0] in statuses) and (not severities or key[1] in severities)
        ]

    assert walk_ids(api, alice, name) == newest_first
    for statuses, severities in [
        ({"TRIGGERED"}, set()),
        (set(), {"SEV1"}),
        ({"ACKNOWLEDGED"}, {"SEV1", "SEV2"}),
        ({"TRIGGERED", "ACKNOWLEDGED"}, {"SEV5"}),
    ]:
        query = {"status": sorted(statuses), "severity": sorted(severities), "limit": ["1"]}
        ids, cursor = [], None
        while True:
            reply = api.call(name, alice, query=query | ({"cursor": [cursor]} if cursor else {}))
            assert reply.status == 200, reply.body
            ids += [i["id"] for i in reply.body["items"]]
            cursor = reply.body["next_cursor"]
            if not reply.body["has_more"]:
                break
        assert ids == expect(statuses, severities), (statuses, severities)
    wrong = api.call(name, alice, query={"status": ["RESOLVED"]})
    assert (wrong.status, wrong.body["code"]) == (400, "validation_error"), "not in OPEN"
    closed = api.call(name, alice, query={"state": ["CLOSED"], "status": ["RESOLVED"]})
    assert closed.status == 200
    page = api.call(name, alice, query={"limit": ["1"], "severity": ["SEV1"]}).body
    other = api.call(name, alice, query={"severity": ["SEV2"], "cursor": [page["next_cursor"]]})
    assert (other.status, other.body["code"]) == (400, "invalid_cursor"), "bound to the filter"
