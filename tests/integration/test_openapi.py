"""The OpenAPI documents the handlers generate match the route table, route for route."""

from __future__ import annotations

import importlib
import json

import pytest

from lambdas.routes import ROUTES, Group, routes_of
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
    timestamps typed as date-time, AddParticipant as two exact shapes told apart by role."""
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
    add = schemas["AddParticipant"]
    assert add["discriminator"]["propertyName"] == "role"
    for ref in add["oneOf"]:
        kind = schemas[ref["$ref"].rsplit("/", 1)[1]]
        assert kind["required"] == ["participant_id", "role"]
        assert kind["additionalProperties"] is False
