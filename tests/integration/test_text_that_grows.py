"""Limits are checked on what is stored: text that grows under NFC (U+FB2C is one code
point typed, three stored) is a 400 naming the field on every route that takes text, never
a 500; and a refused create takes no incident number."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration
GROWS = "\ufb2c"
"""HEBREW LETTER SHIN WITH DAGESH AND SHIN DOT: three code points in NFC."""


@pytest.fixture
def alice(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"))


def refused(reply: Any, field: str) -> None:
    assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body
    assert field in reply.body["message"]
    assert "once normalized" in reply.body["message"]


def test_every_text_field_counts_its_limit_after_normalization(api: Api, alice: Caller) -> None:
    refused(api.call("create_incident", alice, body={"title": GROWS * 67}), "title")
    created = api.call("create_incident", alice, body={"title": GROWS * 66})  # 198 stored
    assert created.status == 201, created.body
    assert len(created.body["summary"]["title"]) == 198
    incident = {"incident_id": created.body["summary"]["id"]}
    refused(api.call("update_incident", alice, incident, body={"title": GROWS * 67}), "title")
    refused(api.call("create_team", alice, body={"name": GROWS * 34}), "name")
    refused(api.call("save_profile", alice, body={"name": GROWS * 34}), "name")
    refused(api.call("add_note", alice, incident, body={"text": GROWS * 334}), "text")


def test_a_refused_create_never_gives_its_number_to_another(api: Api, alice: Caller) -> None:
    """Numbers are taken before the create's write (so creates at once never conflict over
    them): a create refused then leaves a gap, never a repeat, and a body refused before
    the create takes none."""
    first = api.call("create_incident", alice, body={"title": "one"})
    refusals = [
        api.call("create_incident", alice, body={"title": GROWS * 67}),
        api.call("create_incident", alice, body={"title": "t", "teams": [new_id("team")]}),
        api.call("create_incident", alice, body={"title": "t", "assignees": [new_id("user")]}),
    ]
    assert [r.status for r in refusals] == [400, 404, 404]
    second = api.call("create_incident", alice, body={"title": "two"})
    assert (first.body["summary"]["number"], second.body["summary"]["number"]) == (1, 4)
    listed = api.call("account_incidents", alice).body["items"]
    assert sorted(i["number"] for i in listed) == [1, 4], "the refused ones made nothing"


def test_a_name_of_one_caller_is_unaffected(api: Api) -> None:
    who = Caller(new_id("acct"), new_id("user"))
    saved = api.call("save_profile", who, body={"name": GROWS * 33})
    assert saved.status == 200, saved.body
    assert len(saved.body["name"]) == 99
