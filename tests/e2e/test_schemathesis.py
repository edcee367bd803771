"""Schemathesis against the served OpenAPI document: generated requests to every operation
(bounded, deterministic) never get a 5xx, and every response matches the document.

The schema is loaded once the local runtime serves it, so each operation's strategy is run
with Hypothesis directly (schemathesis' lazy pytest loader does not support pytest 9 yet).
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from lambdas.routes import ROUTES
from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration

EXAMPLES_PER_OPERATION = 12


def test_no_server_errors_and_documented_responses(local_api: LocalApi) -> None:
    schema = schemathesis.openapi.from_url(f"{local_api.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) == len(ROUTES)
    headers = {"Authorization": local_api.token(0, 0)}

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Any) -> None:
            response = case.call(base_url=local_api.url, headers=headers)
            case.validate_response(
                response, checks=[not_a_server_error, response_schema_conformance]
            )

        try:
            check()
        except Exception as error:
            raise AssertionError(f"{operation.label}: {error}") from error
