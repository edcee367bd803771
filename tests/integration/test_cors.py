"""CORS from the stage setting on every response a function sends: a success, a handler
error, a validation error; nothing for an origin that is not allowed. An answer names the
origin and the headers a page may read; what it may send is the preflight's business only."""

from __future__ import annotations

import pytest

from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api, Reply
from tests.integration.conftest import BROWSER_ORIGINS

pytestmark = pytest.mark.integration
ALLOW = "Access-Control-Allow-Origin"


def calls(api: Api, origin: str) -> list[Reply]:
    """A success, a handler error (404) and a validation error (400), from `origin`."""
    caller = Caller(new_id("acct"), new_id("user"))
    headers = {"Origin": origin}
    return [
        api.call("my_teams", caller, headers=headers),
        api.call("get_incident", caller, {"incident_id": new_id("inc")}, headers=headers),
        api.call("create_incident", caller, body={"title": ""}, headers=headers),
    ]


@pytest.mark.parametrize("origin", BROWSER_ORIGINS)
def test_every_response_names_an_allowed_origin(api: Api, origin: str) -> None:
    replies = calls(api, origin)
    assert [reply.status for reply in replies] == [200, 404, 400]
    for reply in replies:
        assert reply.headers.get(ALLOW) == origin, reply
        exposed = reply.headers.get("Access-Control-Expose-Headers", "").split(",")
        assert {"ETag", "Location", "Retry-After"} <= set(exposed), reply
        assert reply.headers.get("Vary") == "Origin", "a shared cache must key on the origin"
        preflight_only = {"Access-Control-Allow-Headers", "Access-Control-Max-Age"}
        assert not preflight_only & set(reply.headers), "a preflight's headers, repeated"


def test_an_origin_not_allowed_gets_no_cors_headers(api: Api) -> None:
    for reply in calls(api, "https://evil.example.com"):
        assert ALLOW not in reply.headers, reply
        assert reply.headers.get("Vary") == "Origin", "this answer too depends on the origin"
