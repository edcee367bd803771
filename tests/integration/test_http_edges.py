"""HTTP edges through the real handlers: If-Match exactly as documented (a malformed one is
a 400, never a 412), a ``+`` in a query instant told to be written ``%2B``, and a path
parameter that holds a ``/`` (API Gateway decodes ``%2F`` into it) refused, naming it."""

from __future__ import annotations

import pytest

from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api, Reply
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration


@pytest.fixture
def alice(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"))


@pytest.fixture
def incident(api: Api, alice: Caller) -> str:
    reply = api.call("create_incident", alice, body={"title": "t"})
    assert reply.status == 201
    return str(reply.body["summary"]["id"])


def conditional_update(api: Api, who: Caller, incident: str, if_match: str) -> Reply:
    return api.call(
        "update_incident",
        who,
        {"incident_id": incident},
        body={"severity": "SEV1"},
        headers={"If-Match": if_match},
    )


@pytest.mark.parametrize("value", ['"1', '1"', "1" * 21, '"' + "9" * 21 + '"', 'W/"1', "W/1", ""])
def test_a_malformed_if_match_is_400(api: Api, alice: Caller, incident: str, value: str) -> None:
    reply = conditional_update(api, alice, incident, value)
    assert (reply.status, reply.body["code"]) == (400, "invalid_if_match"), reply.body


@pytest.mark.parametrize("value", ["1", '"1"', 'W/"1"'])
def test_each_documented_if_match_form_is_taken(
    api: Api, alice: Caller, incident: str, value: str
) -> None:
    reply = conditional_update(api, alice, incident, value)
    assert (reply.status, reply.body["version"]) == (200, 2), reply.body


def test_a_plus_that_became_a_space_gets_the_hint(api: Api, alice: Caller) -> None:
    reply = api.call("my_incidents", alice, query={"since": ["2026-01-01T00:00:00 01:00"]})
    assert (reply.status, reply.body["code"]) == (400, "validation_error")
    assert "query.since" in reply.body["message"]
    assert "%2B" in reply.body["message"]


@pytest.mark.parametrize(
    ("route", "path"),
    [
        ("get_incident_by_number", {"number": "1/"}),
        ("get_incident", {"incident_id": "inc_" + "0" * 27 + "/"}),
        ("incident_timeline", {"incident_id": "inc_" + "0" * 27 + "/x"}),
    ],
)
def test_a_decoded_slash_in_a_path_parameter_is_400(
    api: Api, alice: Caller, route: str, path: dict[str, str]
) -> None:
    reply = api.call(route, alice, path)
    assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body
    assert reply.body["message"].startswith("path.")
