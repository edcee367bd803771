"""The OpenAPI documents the handlers generate match the route table, route for route."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from incidents.store import Caller, new_id
from lambdas.http.responses import documented_responses
from lambdas.routes import ALERT_MAX_BYTES, ROUTES, Group, routes_of
from local.openapi.document import DOCUMENT, openapi_document
from tests.helpers.api_harness import Api

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("group", list(Group))
def test_each_handler_documents_exactly_its_routes(api: Api, group: Group) -> None:
    module = importlib.import_module(f"lambdas.{group.value}")
    document = json.loads(module.app.get_openapi_json_schema(title="incidents", version="1"))
    documented = {
        (method.upper(), path, operation["operationId"])
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    }
    expected = {(r.method, r.path, name) for name, r in routes_of(group).items()}
    assert documented == expected
    assert set(api.handlers) == set(Group)


def test_route_table_has_no_clashes() -> None:
    keys = [(route.method, route.path) for route in ROUTES.values()]
    assert len(keys) == len(set(keys))


def test_checked_in_document_is_current_and_complete(api: Api) -> None:
    document = openapi_document()
    documented = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }
    assert documented == {(r.method, r.path) for r in ROUTES.values()}
    assert json.loads(DOCUMENT.read_text()) == document, "run `make openapi`"


def _schemas(node: object) -> list[dict[str, object]]:
    """Every object schema in `node`, nested ones included."""
    found: list[dict[str, object]] = []
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            found.append(node)
        for value in node.values():
            found += _schemas(value)
    elif isinstance(node, list):
        for value in node:
            found += _schemas(value)
    return found


def test_what_generated_clients_read_is_what_the_api_does() -> None:
    """No 422 (validation errors are 400 validation_error), every required field declared,
    timestamps typed as date-time and days as date, AddParticipant as two exact shapes told
    apart by role."""
    document = openapi_document()
    text = json.dumps(document)
    assert '"422"' not in text
    assert "HTTPValidationError" not in text
    for schema in _schemas(document):
        properties, required = schema["properties"], schema.get("required", [])
        assert isinstance(properties, dict)
        assert isinstance(required, list)
        assert set(required) <= set(properties), schema
        for name, field in properties.items():
            if name.endswith("_at"):
                typed = [c for c in field.get("anyOf", [field]) if c.get("type") != "null"]
                assert [c.get("format") for c in typed] == ["date-time"], (name, field)
    schemas = document["components"]["schemas"]
    days = [
        schemas[name]["properties"][field]
        for name, fields in {"IncidentInsights": ("from", "until"),
                             "IncidentInsight": ("range_start", "range_end")}.items()
        for field in fields
    ]  # fmt: skip
    assert [(day["type"], day["format"]) for day in days] == [("string", "date")] * 4, days
    add = schemas["AddParticipant"]
    assert add["discriminator"]["propertyName"] == "role"
    for ref in add["oneOf"]:
        kind = schemas[ref["$ref"].rsplit("/", 1)[1]]
        assert kind["required"] == ["participant_id", "role"]
        assert kind["additionalProperties"] is False


def test_every_response_declares_the_quota_headers() -> None:
    document = openapi_document()
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            for status, response in operation["responses"].items():
                declared = set(_resolved(document, response).get("headers", {}))
                assert {"RateLimit", "RateLimit-Policy"} <= declared, (method, path, status)
                if status in ("429", "503"):
                    assert "Retry-After" in declared, (method, path, status)


def _resolved(document: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """A response, or the shared one it refers to (``#/components/responses/…``)."""
    if "$ref" not in response:
        return response
    return dict(document["components"]["responses"][response["$ref"].rsplit("/", 1)[1]])


def test_answers_given_word_for_word_are_written_once() -> None:
    document = openapi_document()
    shared = document["components"]["responses"]
    assert {"Unauthorized", "TooManyRequests", "ServiceUnavailable"} <= set(shared)
    refs = [
        response["$ref"]
        for methods in document["paths"].values()
        for operation in methods.values()
        for response in operation["responses"].values()
        if "$ref" in response
    ]
    assert {ref.rsplit("/", 1)[1] for ref in refs} == set(shared), "each shared one is used"
    assert len(refs) > 5 * len(shared)


def _example(name: str, status: int) -> dict[str, str]:
    route = ROUTES[name]
    document = openapi_document()
    content = document["paths"][route.path][route.method.lower()]["responses"][str(status)]
    examples = _resolved(document, content)["content"]["application/json"]["examples"]
    (example,) = examples.values()
    return dict(example["value"])


ID_PREFIXES = {
    "incident_id": "inc",
    "team_id": "team",
    "user_id": "user",
    "participant_id": "user",
    "webhook_id": "wh",
    "integration_id": "intg",
    "key_id": "key",
    "window_id": "mw",
    "schedule_id": "sched",
    "override_id": "ovr",
    "contact_method_id": "cm",
    "notification_rule_id": "nr",
    "policy_id": "ep",
}


def commonest_mistake(name: str, key: str) -> dict[str, Any]:
    """The request of route `name` that makes the mistake its 400 example shows: every
    other part of it right (`key`: an integration key, for the alert routes)."""
    route = ROUTES[name]
    names = [part[1:-1] for part in route.path.split("/") if part.startswith("{")]
    path = {n: new_id(ID_PREFIXES[n]) for n in names if n in ID_PREFIXES}
    if "name" in names:  # a heartbeat's
        path["name"] = "nightly"
    if "token" in names:  # a calendar feed's: well formed, so the id is what is wrong
        path["token"] = f"{new_id('acct')}.{'A' * 32}"
    if route.integration_key and path:  # a ping: the key, and a malformed name
        return {"path": {"name": "-x"}, "headers": {"Authorization": f"Bearer {key}"}}
    if route.integration_key:
        payload = {"source": "db", "severity": "info"}
        body = {
            "payload": payload,
            **({} if "change" in route.path else {"event_action": "trigger"}),
        }
        return {"body": body, "headers": {"Authorization": f"Bearer {key}"}}
    if 415 in route.errors:
        return {"path": path, "raw_body": ""}
    if path:
        return {"path": {**path, next(iter(path)): "-x"}}
    if names == ["number"]:
        return {"path": {"number": "0"}}
    return UNPAGED_MISTAKES.get(route.path, {"query": {"limit": ["1000"]}})


UNPAGED_MISTAKES = {
    "/insights/incidents": {"query": {"from": ["2027-03-02"], "until": ["2027-03-01"]}},
    "/oncalls": {"query": {"since": ["2027-03-02T00:00:00Z"], "until": ["2027-03-01T00:00:00Z"]}},
}
"""Reads that take days, not a page: their commonest mistake is a range the wrong way round."""


BAD_REQUEST_ROUTES = sorted(
    name
    for name, route in ROUTES.items()
    if 400 in documented_responses(route) and not route.page_link  # a link's are HTML pages
)


@pytest.fixture(scope="module")
def sender(api: Api) -> str:
    who = Caller(new_id("acct"), new_id("user"))
    return str(api.call("create_integration", who, body={"name": "examples"}).body["key"])


@pytest.mark.parametrize("name", BAD_REQUEST_ROUTES)
def test_every_routes_400_example_is_what_it_answers(api: Api, sender: str, name: str) -> None:
    who = Caller(new_id("acct"), new_id("user")) if ROUTES[name].gateway_authorized else None
    reply = api.call(name, who, **commonest_mistake(name, sender))
    assert (reply.status, reply.body) == (400, _example(name, 400))


def test_an_alert_routes_413_and_429_examples_are_what_it_answers(
    api: Api, set_quotas: Callable[..., None]
) -> None:
    """The examples show the stage's default quota and the route's limit: the answers differ
    from them only in the sizes and numbers."""
    set_quotas(INTEGRATION_ALERTS_PER_MINUTE=2)
    key = api.call("create_integration", Caller(new_id("acct"), new_id("user")), body={"name": "x"})
    bearer = {"Authorization": f"Bearer {key.body['key']}"}
    big = api.call(
        "send_alert", None, raw_body=json.dumps({"x": "y" * ALERT_MAX_BYTES}), headers=bearer
    )
    shown = _example("send_alert", 413)
    assert (big.status, big.body["code"]) == (413, shown["code"])
    assert big.body["message"].split("; ")[1] == shown["message"].split("; ")[1]
    api.call("send_alert", None, raw_body="{}", headers=bearer)  # the quota's second
    refused = api.call("send_alert", None, raw_body="{}", headers=bearer)
    shown = _example("send_alert", 429)
    assert (refused.status, refused.body["code"]) == (429, shown["code"])
    assert refused.body["message"].split(":")[0] == shown["message"].split(":")[0]
