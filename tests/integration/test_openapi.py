"""The OpenAPI documents the handlers generate match the route table, route for route."""

from __future__ import annotations

import importlib
import json

import pytest

from lambdas.routes import ROUTES, Group, routes_of
from local.openapi import DOCUMENT, openapi_document
from tests.api_harness import Api

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
