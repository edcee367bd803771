"""Webhooks and their deliveries, as the API shows them (pydantic models, in the OpenAPI
document); the secret is only in `WebhookCreated` and `RotatedSecret`."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Final, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    model_validator,
)

from incidents.models import EVENT_ID, INCIDENT_ID, RESPONSE, RFC3339, EventType, Page, Timestamp
from incidents.requests import documented, stored_text

WEBHOOK_ID = r"^wh_[0-9A-Za-z]{27}$"
URL_MAX = 2048
DESCRIPTION_MAX = 200
TEST_EVENT: Final = "webhook.test"
"""The type of the event ``POST /webhooks/{id}/test`` sends (not a timeline event)."""

DeliveryType = EventType | Literal["webhook.test"]
"""What a delivery carries: a timeline event's type, or the test event's."""
WebhookId = Annotated[str, StringConstraints(pattern=WEBHOOK_ID)]
WebhookUrl = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, max_length=URL_MAX, pattern=r"^[Hh][Tt][Tt][Pp][Ss]?://"
    ),
    Field(
        description="Where deliveries are posted: https, to a public address (checked again "
        "at every delivery; redirects are not followed). make dev also allows http to "
        "127.0.0.1 / localhost.",
        examples=["https://hooks.example.com/incidents"],
    ),
]
Description = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1),
    stored_text(DESCRIPTION_MAX),
    documented(DESCRIPTION_MAX),
]


def _once_each(types: list[EventType] | None) -> list[EventType] | None:
    """Each type once, in the order first given (a repeat was stored as sent)."""
    return None if types is None else list(dict.fromkeys(types))


EventTypes = Annotated[
    list[EventType] | None,
    Field(
        min_length=1,
        description="The event types delivered; null or absent: every type. A type named "
        "twice is kept once.",
        examples=[["incident.created", "incident.resolved"]],
    ),
    AfterValidator(_once_each),
]


class NewWebhook(BaseModel):
    """A webhook to register: where to post, and which events."""

    model_config = ConfigDict(extra="forbid")

    url: WebhookUrl
    event_types: EventTypes = None
    description: Description | None = None


def _patch_schema(schema: dict[str, Any]) -> None:
    """The document says what the validator checks: at least one field; url and enabled
    never null (event_types and description may be: every type, no description)."""
    for name in ("url", "enabled"):
        field = schema["properties"][name]
        field.pop("default", None)
        field.update(next(c for c in field.pop("anyOf") if c.get("type") != "null"))
    schema["minProperties"] = 1


class WebhookPatch(BaseModel):
    """Fields to change; at least one. ``event_types: null`` means every type again."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_patch_schema)

    url: WebhookUrl | None = None
    event_types: EventTypes = None
    enabled: StrictBool | None = None
    description: Description | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if not self.model_fields_set:
            raise ValueError("give at least one of url, event_types, enabled, description")
        nulls = sorted(
            name
            for name in self.model_fields_set - {"event_types", "description"}
            if getattr(self, name) is None
        )
        if nulls:
            raise ValueError(f"{', '.join(nulls)} cannot be null")
        return self


class Webhook(BaseModel):
    """A registered webhook (never its secret)."""

    model_config = RESPONSE

    id: WebhookId
    url: str
    event_types: list[EventType] | None = Field(description="null: every type")
    description: str | None
    enabled: bool
    created_at: Timestamp
    disabled_reason: str | None = Field(
        default=None, description="why it was disabled, if the sender disabled it"
    )


class WebhookCreated(Webhook):
    """A new webhook with its signing secret: shown here and on rotation only."""

    secret: str = Field(description="whsec_ + base64 of 32 random bytes")


class WebhookList(Page[Webhook]):
    """One page of the account's webhooks."""


class RotatedSecret(BaseModel):
    """The new secret; the previous one keeps signing too for 24 hours."""

    model_config = RESPONSE

    secret: str
    previous_expires_at: Timestamp


class DeliveryStatus(StrEnum):
    """One attempt's outcome: succeeded (2xx), pending (failed, another attempt is
    scheduled at ``next_attempt_at``), failed (failed, and the last attempt: given up)."""

    SUCCEEDED = "succeeded"
    PENDING = "pending"
    FAILED = "failed"


class Delivery(BaseModel):
    """One attempt to deliver one event to one webhook."""

    model_config = RESPONSE

    event_id: Annotated[str, StringConstraints(pattern=EVENT_ID)]
    type: DeliveryType = Field(
        description="the delivered event's type (webhook.test for a test delivery)"
    )
    incident_id: Annotated[str, StringConstraints(pattern=INCIDENT_ID)] | None
    seq: int | None
    attempt: int = Field(ge=1)
    status: DeliveryStatus
    response_status: int | None = Field(description="the endpoint's HTTP status, if any")
    error: str | None = Field(default=None, description="why it failed without a status")
    duration_ms: int
    at: Timestamp
    next_attempt_at: Timestamp | None


class DeliveryList(Page[Delivery]):
    """One page of a webhook's delivery attempts, newest first."""


NOTHING_YET = "2099-01-01T00:00:00Z"
"""A replay's example: an instant no event has reached, so trying the example (Swagger UI,
schemathesis) queues nothing instead of re-sending the account's whole history."""


class Replay(BaseModel):
    """Deliver the account's events from `since` on again, in order."""

    model_config = ConfigDict(extra="forbid")

    since: Annotated[
        str,
        Field(
            pattern=RFC3339,
            description="RFC 3339 instant, with offset: the events from then on (the example, "
            "in the future, replays nothing; give a moment of the last 30 days)",
            examples=[NOTHING_YET],
            json_schema_extra={"format": "date-time"},
        ),
    ]


class Accepted(BaseModel):
    """A 202: the work is queued."""

    model_config = RESPONSE

    id: str = Field(description="the replay's id (rpl_...) or the test event's (evt_...)")
