"""The API fixture: the real handlers, configured as in Lambda, on one table of the server."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

from incidents.store import Store
from incidents.table import TABLE_SCHEMA
from lambdas import runtime
from lambdas.http.quotas import quotas
from lambdas.settings import account_limits
from local.api.call_log import CallRecorder
from local.engines.clients import create_table
from local.events.messaging import Messaging, create_messaging
from tests.conftest import HandlerCalls
from tests.helpers.api_harness import Api
from tests.helpers.paging_world import World
from tests.helpers.providers import Slack, serving_slack

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

API_TABLE = "incidents-api-tests"
BROWSER_ORIGINS = ("http://localhost:3000", "https://app.example.com")


@pytest.fixture(scope="session")
def messaging(moto_endpoint: str) -> Messaging:
    """The delivery queue and event bus on moto; a batch the sender never answered comes
    back after 12 s (make dev: 30), still longer than an attempt can take (10 s)."""
    return create_messaging(moto_endpoint, name="incidents-tests", visibility=12)


@pytest.fixture(scope="session")
def api(
    dynamodb_endpoint: str,
    dynamodb: DynamoDBClient,
    handler_calls: HandlerCalls,
    messaging: Messaging,
) -> Api:
    """Handlers on one session table; every test uses fresh account ids, so none share data.

    The environment is what the CDK stack gives each function (plus the local endpoint).
    """
    create_table(dynamodb, TABLE_SCHEMA, API_TABLE)
    os.environ.update(
        {
            "TABLE_NAME": API_TABLE,
            "DYNAMODB_ENDPOINT": dynamodb_endpoint,
            "CURSOR_SECRET": "api-tests-cursor-secret-0123456789abcdef",
            "POWERTOOLS_SERVICE_NAME": "incidents",
            "POWERTOOLS_METRICS_NAMESPACE": "IncidentsTest",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
            "CORS_ALLOWED_ORIGINS": json.dumps(list(BROWSER_ORIGINS)),
            **messaging.environment(),
        }
    )
    harness = Api()
    recorder = CallRecorder(API_TABLE, lambda: harness.serving, handler_calls.calls.add)
    for client in (
        runtime.dynamodb(), runtime.delivery_queue().sqs, runtime.eventbridge(),
        runtime.firing_queue().sqs,
    ):  # fmt: skip
        recorder.attach(client)
    return harness


@pytest.fixture
def set_quotas(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Set quota variables (``ALERTS_PER_MINUTE=5``…) for this test; the handlers' cached
    quotas are read anew now and after it."""

    def setting(**variables: int) -> None:
        for name, value in variables.items():
            monkeypatch.setenv(name, str(value))
        quotas.cache_clear()

    yield setting
    quotas.cache_clear()


@pytest.fixture
def set_limits(api: Api, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Set the handlers' account limits for this test from limit variables
    (``HEARTBEATS_PER_ACCOUNT=2``…), read as a cold start reads them."""

    def setting(**variables: int) -> None:
        limits = account_limits({name: str(value) for name, value in variables.items()})
        monkeypatch.setattr(runtime.store(), "limits", limits)

    return setting


@pytest.fixture
def slack() -> Iterator[Slack]:
    """A Slack stand-in taking incoming-webhook posts, for one test."""
    with serving_slack() as stand_in:
        yield stand_in


@pytest.fixture
def world(store: Store, slack: Slack) -> World:
    """An account paging Bob (`tests.helpers.paging_world`), on a fresh table."""
    return World(store, slack.url)
