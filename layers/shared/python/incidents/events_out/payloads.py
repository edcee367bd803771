"""What a webhook delivery's body and an EventBridge event's detail hold, as pydantic
models: the body is written from them, and the OpenAPI document's ``webhooks`` section is
generated from them, so what a consumer generates its types from is what it receives.

The Standard Webhooks shape (``{"type", "timestamp", "data"}``); every field is always
present, null when it has no value, as in every answer of the API."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from incidents.events_out.webhook_models import TEST_EVENT, WebhookId
from incidents.models import (
    ACCOUNT_ID,
    RESPONSE,
    AccountEvent,
    EventId,
    EventType,
    IncidentSummary,
    Timestamp,
)

AccountId = Annotated[str, StringConstraints(pattern=ACCOUNT_ID)]
MAX_BODY_BYTES = 64 * 1024
"""A body's bound. It holds by construction: an event and a summary are bounded by their
models (a note 1,000 characters, a created event 20 participants, a title 200 characters),
so the largest body is a few KB (`tests/unit/test_delivery_schedule.py` builds it).
EventBridge and SQS take 256 KB."""


class EventData(BaseModel):
    """An event, its account, and the incident's summary after the change."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    account_id: AccountId
    event: AccountEvent = Field(description="the event exactly as GET /events shows it")
    incident: IncidentSummary | None = Field(
        description="the incident's summary after this change (kept with the event, so a "
        "retry or a replay carries the summary of that moment); null for a schedule's "
        "handoff, and for an event written before summaries were kept with events"
    )


class EventPayload(BaseModel):
    """An event delivered to a webhook (and the detail of an EventBridge event)."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    type: EventType = Field(description="the event's type (data.event.type)")
    timestamp: Timestamp = Field(description="when the event happened (data.event.at)")
    data: EventData


class TestData(BaseModel):
    """What a test delivery names: its account, webhook and event id."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    account_id: AccountId
    webhook_id: WebhookId
    event_id: EventId


class TestPayload(BaseModel):
    """The delivery ``POST /webhooks/{webhook_id}/test`` sends."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    type: Literal["webhook.test"] = TEST_EVENT
    timestamp: Timestamp
    data: TestData


def event_body(account_id: str, event: AccountEvent, incident: IncidentSummary | None) -> str:
    """The body every consumer of `event` receives, as compact JSON (UTF-8 as is). Built
    without validating again: its parts are validated models and the account id came from
    checked claims, and a publisher must not stop on a body."""
    data = EventData.model_construct(account_id=account_id, event=event, incident=incident)
    payload = EventPayload.model_construct(type=event.type, timestamp=event.at, data=data)
    return payload.model_dump_json(by_alias=True)


def test_body(account_id: str, webhook_id: str, event_id: str, at: str) -> str:
    """The body of a test delivery."""
    data = TestData(account_id=account_id, webhook_id=webhook_id, event_id=event_id)
    return TestPayload(timestamp=at, data=data).model_dump_json()
