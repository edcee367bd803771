"""Events in over HTTP: the account's integrations (any user of the account manages them),
and ``POST /alerts``, which monitoring tools call with an integration key instead of a
user's token (``Authorization: Bearer <key>``, or ``routing_key`` in the body as
PagerDuty's Events API v2 takes it)."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from dynashard import RateLimits, RatePolicy
from incidents.alerts import integrations as commands
from incidents.alerts.ingest import alert_count, ingest_alert
from incidents.alerts.integrations import KEY_PREFIX
from incidents.alerts.models import (
    INTEGRATION_ID,
    AlertAccepted,
    AlertCount,
    Integration,
    IntegrationChanges,
    IntegrationList,
    IntegrationWithKey,
    MoveAlert,
    NewIntegration,
    TriggerAlert,
)
from incidents.errors import RateLimitedError, UnauthorizedError
from incidents.incident.commands import load_summary
from incidents.models import INCIDENT_ID
from incidents.table import TABLE_SCHEMA
from lambdas.api import (
    answer,
    caller,
    lambda_handler,
    new_resolver,
    no_content,
    route,
)
from lambdas.cors import request_header
from lambdas.runtime import dynamodb, store, table_name
from lambdas.settings import alerts_per_minute

IntegrationId = Annotated[str, Path(pattern=INTEGRATION_ID)]
IncidentId = Annotated[str, Path(pattern=INCIDENT_ID)]
AlertBody = Annotated[TriggerAlert | MoveAlert, Body(discriminator="event_action")]
BEARER = "bearer "
ALERTS_QUOTA = "alerts"
BUCKET_WRITES_PER_SECOND = 500
"""Writes a second one bucket item takes before the quota is spread over more (half of a
partition's 1,000)."""

app = new_resolver()


@route(app, "create_integration")
def create_integration(body: NewIntegration) -> Response[IntegrationWithKey]:
    """A new integration; the answer holds its key (shown only here and on rotation)."""
    created = commands.create_integration(store(), caller(app), body)
    return answer(app, created, status=201, location=f"/integrations/{created.id}")


@route(app, "list_integrations")
def list_integrations() -> IntegrationList:
    """The account's integrations, oldest first."""
    return IntegrationList(items=commands.list_integrations(store(), caller(app)))


@route(app, "get_integration")
def get_integration(integration_id: IntegrationId) -> Integration:
    """One integration (never its key)."""
    return commands.get_integration(store(), caller(app), integration_id)


@route(app, "update_integration")
def update_integration(integration_id: IntegrationId, body: IntegrationChanges) -> Integration:
    """Change its name, its team or its default severity."""
    return commands.update_integration(store(), caller(app), integration_id, body)


@route(app, "delete_integration")
def delete_integration(integration_id: IntegrationId) -> Response[None]:
    """Delete it; its key stops working at once."""
    commands.delete_integration(store(), caller(app), integration_id)
    return no_content()


@route(app, "rotate_integration_key")
def rotate_integration_key(integration_id: IntegrationId) -> IntegrationWithKey:
    """A new key; the old one stops working at once."""
    return commands.rotate_key(store(), caller(app), integration_id)


@route(app, "incident_alerts")
def incident_alerts(incident_id: IncidentId) -> AlertCount:
    """How many alerts the incident received: its counter's shards, one batch read."""
    who = caller(app)
    load_summary(store(), who, incident_id)  # 404 outside the caller's account
    return AlertCount(
        incident_id=incident_id, alerts=alert_count(store(), who.account_id, incident_id)
    )


@route(app, "send_alert")
def send_alert(body: AlertBody) -> Response[AlertAccepted]:
    """Open, join, acknowledge or resolve the incident of the alert's ``dedup_key``."""
    key = _bearer() or body.routing_key
    if not key:
        raise UnauthorizedError("send the integration key as Authorization: Bearer <key>")
    who, integration = commands.authenticate(store(), key)
    decision = rate_limits().take(who.account_id, ALERTS_QUOTA, alerts_policy(os.environ))
    if not decision.allowed:
        raise RateLimitedError(
            f'rate limit "{decision.policy.name}": {decision.policy.limit} alerts a minute per '
            f"account; retry in {decision.retry_after} s",
            decision.headers(),
        )
    accepted = answer(app, ingest_alert(store(), who, integration, body), status=202)
    accepted.headers.update(decision.headers())
    return accepted


def alerts_policy(env: Mapping[str, str]) -> RatePolicy:
    """The stage's quota of alerts a minute per account (`ALERTS_PER_MINUTE`), one bucket
    item up to `BUCKET_WRITES_PER_SECOND`, more shards above."""
    limit = alerts_per_minute(env)
    per_second = limit / 60
    shards = 1
    while per_second / shards > BUCKET_WRITES_PER_SECOND and shards * 2 <= limit:
        shards *= 2
    return RatePolicy(ALERTS_QUOTA, limit, 60, shards)


@functools.cache
def rate_limits() -> RateLimits:
    """The container's limiter, on the stage's table."""
    return RateLimits(dynamodb(), table_name(), TABLE_SCHEMA)


def _bearer() -> str | None:
    """The key in ``Authorization``: ``Bearer <key>``, or the bare key (an EventBridge
    connection's API key sends the secret as the header's whole value)."""
    header = request_header(app.current_event.headers, "Authorization").strip()
    if header.lower().startswith(BEARER):
        return header[len(BEARER) :].strip() or None
    return header if header.startswith(KEY_PREFIX) else None


handler = lambda_handler(app)
