"""End to end over HTTP: the local runtime serves the real handlers behind the emulated
authorizer; lists, updates, paging, and every way in for a stranger."""

from __future__ import annotations

import gzip
import json
import random
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from local.openapi.document import DOCUMENT
from tests.e2e.conftest import LocalApi

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration


def first_ids(api: LocalApi, path: str, token: str) -> list[str]:
    status, body = api.request("GET", path, token)
    assert status == 200, body
    return [item["id"] for item in body["items"]]


def team_of(api: LocalApi, account: int, user: int) -> str:
    user_id = api.user_id(account, user)
    teams: dict[str, list[str]] = api.accounts[account]["teams"]
    return next(team for team, members in teams.items() if user_id in members)


def test_strangers_get_401_400_404_and_403(local_api: LocalApi) -> None:
    assert local_api.request("GET", "/me/incidents")[0] == 401
    status, body = local_api.request("GET", "/me/incidents", "dev-not-a-token")
    assert (status, body["code"]) == (401, "unauthorized")
    a, b = local_api.token(0, 0), local_api.token(1, 0)
    status, body = local_api.request("GET", "/me/incidents?cursor=bm90LWEtY3Vyc29y", a)
    assert (status, body["code"]) == (400, "invalid_cursor")
    status, created = local_api.request("POST", "/incidents", a, {"title": "A only"})
    assert status == 201
    incident = created["summary"]["id"]
    assert local_api.request("GET", f"/incidents/{incident}", b)[0] == 404
    assert local_api.request("PATCH", f"/incidents/{incident}", b, {"title": "x"})[0] == 404
    team_a = team_of(local_api, 0, 0)
    assert local_api.request("GET", f"/teams/{team_a}/incidents", b)[0] == 404
    assert local_api.request("GET", f"/me/teams/incidents?team={team_a}", b)[0] == 403
    assert incident not in first_ids(local_api, "/incidents?limit=100", b)


def test_update_shows_in_every_list(local_api: LocalApi) -> None:
    creator, assignee, responder = (local_api.token(0, n) for n in (0, 1, 2))
    team = team_of(local_api, 0, 1)
    body = {"title": "Payments: 5xx spike", "teams": [team], "assignees": [local_api.user_id(0, 1)]}
    status, created = local_api.request("POST", "/incidents", creator, body)
    assert status == 201, created
    incident = created["summary"]["id"]
    status, _ = local_api.request(
        "POST",
        f"/incidents/{incident}/participants",
        creator,
        {"participant_id": local_api.user_id(0, 2), "role": "responder"},
    )
    assert status == 200
    status, updated = local_api.request(
        "PATCH",
        f"/incidents/{incident}",
        creator,
        {"title": "Payments: 5xx spike (mitigated)", "status": "ACKNOWLEDGED"},
        {"If-Match": '"1"'},
    )
    assert (status, updated["version"]) == (200, 2)
    lists = [
        ("/me/incidents", creator),
        ("/me/incidents", assignee),
        ("/me/incidents", responder),
        ("/me/teams/incidents", assignee),
        (f"/teams/{team}/incidents", assignee),
        ("/incidents", responder),
    ]
    for path, token in lists:
        status, page = local_api.request("GET", f"{path}?state=OPEN&limit=5", token)
        assert status == 200, (path, page)
        newest = page["items"][0]
        assert (newest["id"], newest["title"], newest["version"]) == (
            incident,
            "Payments: 5xx spike (mitigated)",
            2,
        ), path


def expected_team_list(dynamodb: DynamoDBClient, api: LocalApi, teams: set[str]) -> list[str]:
    """Open incidents of `teams`, newest first, each once: read from the table itself."""
    found: dict[str, tuple[str, str]] = {}
    request: dict[str, Any] = {"TableName": api.table}
    while True:
        response = dynamodb.scan(**request)
        for item in response["Items"]:
            participant = item.get("participant_id", {}).get("S")
            if participant in teams and item["incident_state"]["S"] == "OPEN":
                incident = item["incident_id"]["S"]
                found[incident] = (item["incident_created_at"]["S"], incident)
        if "LastEvaluatedKey" not in response:
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    return [incident for _, incident in sorted(found.values(), reverse=True)]


def test_my_teams_pages_to_the_end(local_api: LocalApi, dynamodb: DynamoDBClient) -> None:
    token, user_id = local_api.token(0, 0), local_api.user_id(0, 0)
    teams = {t for t, members in local_api.accounts[0]["teams"].items() if user_id in members}
    assert len(teams) > 1
    expected = expected_team_list(dynamodb, local_api, teams)
    rng = random.Random(5)
    seen: list[str] = []
    cursor = None
    for _ in range(500):
        path = f"/me/teams/incidents?state=OPEN&limit={rng.randint(1, 17)}"
        if cursor:
            path += f"&cursor={quote(cursor)}"
        status, page = local_api.request("GET", path, token)
        assert status == 200, page
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert seen == expected
    assert len(expected) > 20


def test_the_document_and_swagger_ui_are_served_compact_and_gzipped(local_api: LocalApi) -> None:
    """The document is served as compact JSON, gzipped to a client that accepts it (every
    browser does): what a page loads is a fraction of the indented file kept in the repo."""
    sizes = {}
    for path in ("/openapi.json", "/docs"):
        for encoding in ("gzip", "identity"):
            request = urllib.request.Request(
                local_api.url + path, headers={"Accept-Encoding": encoding}
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                served, given = response.read(), response.headers.get("Content-Encoding")
                assert "Accept-Encoding" in response.headers["Vary"]
            assert given == ("gzip" if encoding == "gzip" else None), (path, encoding)
            sizes[path, encoding] = len(served)
            body = gzip.decompress(served) if given else served
            if path == "/openapi.json":
                assert b"\n" not in body, "compact JSON"
                assert (
                    json.loads(body)["paths"].keys()
                    == json.loads(DOCUMENT.read_text())["paths"].keys()
                )
    kept = DOCUMENT.stat().st_size
    assert sizes["/openapi.json", "identity"] < kept * 0.7, (sizes, kept)
    assert sizes["/openapi.json", "gzip"] < kept * 0.1, (sizes, kept)
    assert sizes["/docs", "gzip"] < sizes["/docs", "identity"] * 0.4, sizes


def test_the_documents_examples_work_on_the_demo_data(local_api: LocalApi) -> None:
    """What Swagger UI prefills answers as documented when signed in as the first demo user:
    no made-up id that 404s."""
    status, document = local_api.request("GET", "/openapi.json")
    assert status == 200
    operations = {
        op["operationId"]: (path, op)
        for path, methods in document["paths"].items()
        for op in methods.values()
    }

    def example_path(operation: str, **known: str) -> str:
        path: str = operations[operation][0]
        for parameter in operations[operation][1].get("parameters", []):
            if parameter["in"] == "path":
                value = known.get(parameter["name"], parameter.get("example"))
                assert value is not None, f"{operation}: {parameter['name']} has no example"
                path = path.replace("{" + parameter["name"] + "}", str(value))
        return path

    def body(operation: str) -> Any:
        return operations[operation][1]["requestBody"]["content"]["application/json"]["example"]

    me = local_api.token(0, 0)
    status, created = local_api.request("POST", "/incidents", me, body("create_incident"))
    assert status == 201, created
    incident = created["summary"]["id"]
    added = local_api.request(
        "POST", example_path("add_participant", incident_id=incident), me, body("add_participant")
    )
    assert added[0] == 200, added
    for operation in ("team_incidents", "get_incident_by_number", "get_profile"):
        status, answer = local_api.request("GET", example_path(operation), me)
        assert status == 200, (operation, answer)
    team = operations["my_teams_incidents"][1]["parameters"]
    (team_param,) = [p for p in team if p["name"] == "team"]
    (example_team,) = team_param["example"]  # an array parameter's example is an array
    assert local_api.request("GET", f"/me/teams/incidents?team={example_team}", me)[0] == 200


def test_swagger_uis_link_to_the_document_serves_the_document(local_api: LocalApi) -> None:
    status, document = local_api.request("GET", "/docs?format=json")
    assert status == 200
    assert document["openapi"].startswith("3.")
