"""Every list page is bounded: on a slow engine a page stops at its time budget with what it
has proved in order, has_more and a cursor, and the walk is still the exact list; "all my
teams" reads at most 100 teams."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from incidents.incident.queries import MAX_TEAMS
from incidents.store import Caller, new_id
from lambdas import incident_queries, runtime
from tests.helpers.api_harness import Api
from tests.helpers.people import new_api_user

QUERY_SECONDS = 0.05


@pytest.fixture
def slow_engine() -> Iterator[None]:
    """Every Query takes 50 ms more, as a loaded engine would."""

    def slow(**_: Any) -> None:
        time.sleep(QUERY_SECONDS)

    client = runtime.dynamodb()
    client.meta.events.register("before-call.dynamodb.Query", slow)
    yield
    client.meta.events.unregister("before-call.dynamodb.Query", slow)


def walk(api: Api, who: Caller, limit: int) -> list[tuple[list[str], bool]]:
    """(ids, has_more) of every page of my teams' incidents."""
    pages, cursor = [], None
    while True:
        query = {"limit": [str(limit)], **({"cursor": [cursor]} if cursor else {})}
        reply = api.call("my_teams_incidents", who, query=query)
        assert reply.status == 200, reply.body
        pages.append(([item["id"] for item in reply.body["items"]], reply.body["has_more"]))
        cursor = reply.body["next_cursor"]
        if not reply.body["has_more"]:
            return pages
        assert len(pages) < 200


def test_a_slow_engine_cuts_pages_short_and_the_walk_stays_exact(
    api: Api, slow_engine: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = new_api_user(api, new_id("acct"))
    teams = [api.call("create_team", alice, body={"name": f"T{n}"}).body["id"] for n in range(12)]
    for n in range(40):
        body = {"title": f"i{n}", "teams": [teams[n % 12], teams[(n * 5) % 12]]}
        assert api.call("create_incident", alice, body=body).status == 201
    unbounded = walk(api, alice, 25)
    expected = [i for ids, _ in unbounded for i in ids]
    assert len(expected) == 40
    monkeypatch.setattr(incident_queries, "PAGE_SECONDS", 2 * QUERY_SECONDS)
    bounded = walk(api, alice, 25)
    assert [i for ids, _ in bounded for i in ids] == expected
    assert any(more and len(ids) < 25 for ids, more in bounded), "the budget cut pages short"
    assert all(len(ids) == 25 or not more for ids, more in unbounded)


def test_all_my_teams_reads_at_most_100_teams(api: Api) -> None:
    alice = new_api_user(api, new_id("acct"))
    teams = [
        api.call("create_team", alice, body={"name": f"T{n}"}).body["id"]
        for n in range(MAX_TEAMS + 1)
    ]
    refused = api.call("my_teams_incidents", alice)
    assert (refused.status, refused.body["code"]) == (400, "too_many_teams")
    assert "team=" in refused.body["message"]
    named = api.call("my_teams_incidents", alice, query={"team": teams[:MAX_TEAMS]})
    assert named.status == 200
