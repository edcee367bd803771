"""A key's answer is the key's own (issue 41, point 5): a keyed note or create whose
Powertools record is gone answers from its guard only for the same request; a guard that
has lapsed (``ExpiresAt`` in the past, not yet deleted by TTL) is no guard, so the key is a
new request; never an old answer for another incident or another body (DynamoDB Local)."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.store import Caller, new_id
from lambdas import runtime
from tests.helpers.api_harness import Api, Reply
from tests.helpers.deliveries import new_incident

pytestmark = pytest.mark.integration


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def note(api: Api, who: Caller, incident: str, text: str, key: str) -> Reply:
    return api.call(
        "add_note",
        who,
        {"incident_id": incident},
        body={"text": text},
        headers={"Idempotency-Key": key},
    )


def create(api: Api, who: Caller, title: str, key: str) -> Reply:
    return api.call("create_incident", who, body={"title": title}, headers={"Idempotency-Key": key})


def key_items() -> list[dict[str, Any]]:
    """Every idempotency record and command guard in the table."""
    client, table = runtime.dynamodb(), runtime.table_name()
    pages = client.get_paginator("scan").paginate(TableName=table)
    return [
        item
        for page in pages
        for item in page["Items"]
        if item["PK"]["S"].startswith("idempotency#")
        or item.get("Type", {}).get("S") == "create_once"
    ]


def delete_records() -> None:
    """The Powertools records go (as TTL removes them); the guards stay."""
    client, table = runtime.dynamodb(), runtime.table_name()
    for item in key_items():
        if item["PK"]["S"].startswith("idempotency#"):
            client.delete_item(TableName=table, Key={"PK": item["PK"], "SK": item["SK"]})


def expire_all() -> None:
    """Records and guards past their ``ExpiresAt``, still in the table (TTL lags)."""
    client, table = runtime.dynamodb(), runtime.table_name()
    for item in key_items():
        client.update_item(
            TableName=table,
            Key={"PK": item["PK"], "SK": item["SK"]},
            UpdateExpression="SET ExpiresAt = :past",
            ExpressionAttributeValues={":past": {"N": "1000"}},
        )


def timeline(api: Api, who: Caller, incident: str) -> list[dict[str, Any]]:
    listed = api.call("incident_timeline", who, {"incident_id": incident})
    assert listed.status == 200, listed.body
    return list(listed.body["items"])


def test_without_its_record_a_note_key_answers_only_its_own_note(api: Api, alice: Caller) -> None:
    x, y = new_incident(api, alice), new_incident(api, alice)
    first = note(api, alice, x, "first", "k")
    assert first.status == 201, first.body
    delete_records()
    again = note(api, alice, x, "first", "k")
    assert (again.status, again.body) == (201, first.body)
    for incident, text in ((x, "other text"), (y, "first"), (y, "new")):
        delete_records()  # the guard alone decides
        reused = note(api, alice, incident, text, "k")
        assert (reused.status, reused.body["code"]) == (409, "idempotency_key_reused")
    assert [e["seq"] for e in timeline(api, alice, x)] == [1, 2]
    assert [e["seq"] for e in timeline(api, alice, y)] == [1]


def test_a_lapsed_note_key_is_a_new_note_on_its_own_incident(api: Api, alice: Caller) -> None:
    x, y = new_incident(api, alice), new_incident(api, alice)
    assert note(api, alice, x, "first", "k").status == 201
    expire_all()
    fresh = note(api, alice, y, "second", "k")
    assert fresh.status == 201, fresh.body
    assert (fresh.body["incident_id"], fresh.body["note"]["text"]) == (y, "second")
    assert [e.get("note") for e in timeline(api, alice, y)] == [None, {"text": "second"}]
    assert len(timeline(api, alice, x)) == 2
    again = note(api, alice, y, "second", "k")
    assert (again.status, again.body) == (201, fresh.body), "the new guard holds"


def test_without_its_record_a_create_key_answers_only_its_own_body(api: Api, alice: Caller) -> None:
    first = create(api, alice, "checkout down", "c")
    assert first.status == 201, first.body
    delete_records()
    again = create(api, alice, "checkout down", "c")
    assert (again.status, again.body["summary"]["id"]) == (201, first.body["summary"]["id"])
    delete_records()
    other = create(api, alice, "search down", "c")
    assert (other.status, other.body["code"]) == (409, "idempotency_key_reused")
    delete_records()
    used = note(api, alice, first.body["summary"]["id"], "checkout down", "c")
    assert (used.status, used.body["code"]) == (409, "idempotency_key_reused")


def test_a_lapsed_create_key_creates_anew(api: Api, alice: Caller) -> None:
    first = create(api, alice, "checkout down", "c")
    expire_all()
    fresh = create(api, alice, "search down", "c")
    assert fresh.status == 201, fresh.body
    assert fresh.body["summary"]["id"] != first.body["summary"]["id"]
    assert fresh.body["summary"]["title"] == "search down"
