"""Webhooks over HTTP: register, list, read, change, delete, rotate the secret, read the
delivery log, replay and test. Any user of the account manages the account's webhooks."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path

from incidents.errors import ForbiddenError
from incidents.events_out import deliveries
from incidents.events_out import webhooks as commands
from incidents.events_out.replay import send_test, start_replay
from incidents.events_out.webhook_models import (
    WEBHOOK_ID,
    Accepted,
    DeliveryList,
    NewWebhook,
    Replay,
    RotatedSecret,
    Webhook,
    WebhookCreated,
    WebhookList,
    WebhookPatch,
)
from incidents.models import EventType
from incidents.paging import DEFAULT_LIMIT, PageRequest
from lambdas.http.admission import caller, lacks
from lambdas.http.api import answer, lambda_handler, new_resolver, no_content, route
from lambdas.http.params import Cursor, Limit, parse_instant
from lambdas.runtime import delivery_queue, endpoint_policy, store

WebhookId = Annotated[str, Path(pattern=WEBHOOK_ID)]

app = new_resolver()


@route(app, "create_webhook")
def create_webhook(body: NewWebhook) -> Response[WebhookCreated]:
    """Register a webhook; the answer holds its signing secret (shown only here and on
    rotation)."""
    _may_receive(body.event_types)
    created = commands.create_webhook(store(), caller(), body, endpoint_policy())
    return answer(app, created, status=201, location=f"/webhooks/{created.id}")


@route(app, "list_webhooks")
def list_webhooks(*, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> WebhookList:
    """The account's webhooks, oldest first."""
    page = commands.list_webhooks(store(), caller(), PageRequest(limit, cursor, descending=False))
    return WebhookList(items=page.items, next_cursor=page.next_cursor, has_more=page.has_more)


@route(app, "get_webhook")
def get_webhook(webhook_id: WebhookId) -> Webhook:
    """One webhook (never its secret)."""
    return commands.get_webhook(store(), caller(), webhook_id)


@route(app, "update_webhook")
def update_webhook(webhook_id: WebhookId, body: WebhookPatch) -> Webhook:
    """Change the URL, event types, description, or enable / disable it."""
    changed = "event_types" in body.model_fields_set
    _may_receive(body.event_types if changed else _types_of(webhook_id))
    return commands.update_webhook(store(), caller(), webhook_id, body, endpoint_policy())


@route(app, "delete_webhook")
def delete_webhook(webhook_id: WebhookId) -> Response[None]:
    """Delete a webhook; its queued deliveries are dropped."""
    commands.delete_webhook(store(), caller(), webhook_id)
    return no_content()


@route(app, "rotate_webhook_secret")
def rotate_webhook_secret(webhook_id: WebhookId) -> RotatedSecret:
    """A new secret; the previous one signs too for 24 hours."""
    return commands.rotate_secret(store(), caller(), webhook_id)


@route(app, "list_deliveries")
def list_deliveries(
    webhook_id: WebhookId, *, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> DeliveryList:
    """Every delivery attempt of the last 30 days, newest first."""
    page = deliveries.list_deliveries(store(), caller(), webhook_id, PageRequest(limit, cursor))
    return DeliveryList(items=page.items, next_cursor=page.next_cursor, has_more=page.has_more)


@route(app, "replay_webhook")
def replay_webhook(webhook_id: WebhookId, body: Replay) -> Accepted:
    """Queue the account's events from `since` on for delivery again, in order."""
    _may_receive(_types_of(webhook_id))
    since = parse_instant(body.since, "since")
    assert since is not None, "required by the body's model"
    queued = start_replay(store(), delivery_queue(), caller(), webhook_id, since)
    return Accepted(id=queued)


@route(app, "test_webhook")
def test_webhook(webhook_id: WebhookId) -> Accepted:
    """Queue a ``webhook.test`` event for this webhook."""
    return Accepted(id=send_test(store(), delivery_queue(), caller(), webhook_id))


def _types_of(webhook_id: str) -> list[EventType] | None:
    return commands.get_webhook(store(), caller(), webhook_id).event_types


def _may_receive(types: list[EventType] | None) -> None:
    """403 for an API key without ``schedules:read`` pointing a webhook of handoffs (named,
    or every type) somewhere: they tell who is on call."""
    if lacks("schedules:read") and (types is None or EventType.SCHEDULE_HANDOFF in types):
        raise ForbiddenError(
            "this API key lacks the scope schedules:read: this webhook receives "
            "schedule.handoff events (event_types null is every type); name event_types "
            "without it"
        )


handler = lambda_handler(app)
