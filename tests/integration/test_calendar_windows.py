"""Windows at the ends of the calendar through the real handlers: instants whose UTC is in
year 0 or 10000 are answered (not a 500), and years before 1000 sort before later ones."""

from __future__ import annotations

import pytest

from incidents.incident.create import new_summary
from incidents.requests import CreateIncident
from incidents.store import Caller, new_id
from lambdas import runtime
from local.demo.data import created_items, write_batches
from tests.helpers.api_harness import Api
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration
LISTS = ["my_incidents", "my_teams_incidents", "account_incidents", "account_events"]


@pytest.fixture
def alice(api: Api) -> Caller:
    who = new_api_user(api, new_id("acct"))
    team = api.call("create_team", who, body={"name": "SRE"})
    assert team.status == 201
    old = new_summary(who, 1, CreateIncident(title="Ancient"), "0999-03-01T00:00:00.000000Z")
    write_batches(runtime.store(), created_items(runtime.store(), who, old, [team.body["id"]]))
    reply = api.call("create_incident", who, body={"title": "Now", "teams": [team.body["id"]]})
    assert reply.status == 201
    return who


def titles(api: Api, who: Caller, name: str, **query: str) -> list[str]:
    reply = api.call(name, who, query={k: [v] for k, v in query.items()})
    assert reply.status == 200, (name, query, reply.body)
    if name == "account_events":
        return [e["incident"]["title"] for e in reply.body["items"] if e["incident"]]
    return [item["title"] for item in reply.body["items"]]


@pytest.mark.parametrize("name", LISTS)
def test_instants_outside_the_utc_calendar_are_answered(api: Api, alice: Caller, name: str) -> None:
    assert titles(api, alice, name, since="0001-01-01T00:00:00+01:00") == titles(api, alice, name)
    assert titles(api, alice, name, until="9999-12-31T23:59:59-01:00") == titles(api, alice, name)
    assert titles(api, alice, name, until="0001-01-01T00:30:00+01:00") == []
    assert titles(api, alice, name, since="9999-12-31T23:30:00-01:00") == []


@pytest.mark.parametrize("name", LISTS[:3])
def test_years_before_1000_are_windowed_in_order(api: Api, alice: Caller, name: str) -> None:
    assert titles(api, alice, name) == ["Now", "Ancient"]
    assert titles(api, alice, name, since="0999-01-01T00:00:00Z") == ["Now", "Ancient"]
    assert titles(api, alice, name, since="0999-06-01T00:00:00Z") == ["Now"]
    assert titles(api, alice, name, until="0999-06-01T00:00:00Z") == ["Ancient"]


def test_an_impossible_date_is_400_naming_the_parameter(api: Api, alice: Caller) -> None:
    reply = api.call("account_incidents", alice, query={"until": ["2026-02-30T00:00:00Z"]})
    assert (reply.status, reply.body["code"]) == (400, "validation_error")
    assert reply.body["message"].startswith("until: ")
