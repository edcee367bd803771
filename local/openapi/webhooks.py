"""The document's ``webhooks`` section: what a registered endpoint receives, one entry per
event type (the envelope, the event union, an example of that type) and one for
``webhook.test``, generated from the models the bodies are written from
(`incidents.events_out.payloads`), so a consumer can generate its types from it."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from incidents.events_out.payloads import EventPayload, TestPayload, event_body, test_body
from incidents.events_out.webhook_models import TEST_EVENT
from incidents.models import (
    ACCOUNT_EVENTS,
    EVENTS,
    AccountEvent,
    EventType,
    IncidentSummary,
    ScheduleHandoff,
)

REF = "#/components/schemas/{model}"
UNIONS = {
    "TimelineEvent": "One change to an incident; `type` tells which kind, and each kind "
    "carries only its own fields.",
    "AccountEvent": "One event of an account: a change to one of its incidents (a "
    "`TimelineEvent`'s kinds) or a schedule's handoff; `type` tells which kind.",
}
"""The event unions, each named once: an incident's timeline, and an account's events."""
HEADERS = {
    "webhook-id": "the event's id (evt_…): the same on every retry and replay; deduplicate on it",
    "webhook-timestamp": "when this attempt was signed, Unix seconds (refuse one older than 5 "
    "minutes)",
    "webhook-signature": "v1,<base64 HMAC-SHA256 of '<webhook-id>.<webhook-timestamp>.<body>'> "
    "for each secret in use, space-separated (Standard Webhooks)",
}
ACCOUNT = "acct_2J9dTbWJbHq3ZKm3sYxvV0nE4aR"
ALICE, BOB = "user_2J9dTcXQk1pN0hB5wUe7rTyZsLm", "user_2J9dTdY2m8vC4nJ6xRf1qWgHkPz"
INCIDENT = "inc_2J9dTn4Qb1ZkN0aH7cV3mXyPqLs"
INTEGRATION = "intg_2J9dTq7Kd3WmB8sF1gL5vNcXyRa"
SCHEDULE = "sched_2J9dTs9Md5YoR4eL1gZ7qBcUwPx"
POLICY = "ep_2J9dTt2Nf6ZpS5fM2hA8rCdVxQy"
WEBHOOK = "wh_2J9dTn4Qb1ZkN0aH7cV3mXyPqLs"
"""A well-formed webhook id for the checked-in document's examples."""
AT = "2026-11-24T08:41:07.120345Z"


def add_webhooks(document: dict[str, Any]) -> None:
    """The ``webhooks`` entries and the schemas they name; the event union named once."""
    _, schemas = models_json_schema(
        [(EventPayload, "serialization"), (TestPayload, "serialization")], ref_template=REF
    )
    components = document["components"]["schemas"]
    for name, schema in schemas["$defs"].items():
        components.setdefault(name, schema)
    document["webhooks"] = {
        kind: _entry(TestPayload if kind == TEST_EVENT else EventPayload, body)
        for kind, body in example_documents("bodies").items()
    }
    name_event_union(document)
    document["components"]["schemas"] = dict(sorted(components.items()))


def name_event_union(document: dict[str, Any]) -> None:
    """The event unions, which pydantic writes inline wherever an event is, each as one
    component (`UNIONS`) that every place names: the account's is the one that holds the
    handoff."""
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in UNIONS}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            mapping = node.get("discriminator", {}).get("mapping", {})
            if EventType.NOTE_ADDED.value in mapping:
                union = {"oneOf": node.pop("oneOf"), "discriminator": node.pop("discriminator")}
                name = "AccountEvent" if EventType.SCHEDULE_HANDOFF.value in mapping else (
                    "TimelineEvent"
                )  # fmt: skip
                found[name].append(union)
                node["$ref"] = REF.format(model=name)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(document)
    for name, unions in found.items():
        assert unions, f"the {name} union is in the document"
        assert all(union == unions[0] for union in unions), f"one {name} union"
        document["components"]["schemas"][name] = {**unions[0], "description": UNIONS[name]}


def _entry(model: type[BaseModel], example: dict[str, Any]) -> dict[str, Any]:
    kind = example["type"]
    return {
        "post": {
            "operationId": f"on_{kind.replace('.', '_')}",
            "summary": f"{kind}: posted to each webhook that wants it",
            "tags": ["webhook deliveries"],
            "security": [],
            "parameters": [_header(name, text) for name, text in HEADERS.items()],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {"$ref": REF.format(model=model.__name__)},
                        "example": example,
                    }
                },
            },
            "responses": {
                "2XX": {"description": "received: the delivery succeeded"},
                "410": {"description": "gone: the webhook is disabled, nothing more is sent"},
                "429": {
                    "description": "busy: tried again no sooner than Retry-After says "
                    "(up to 12 hours), else on the retry schedule"
                },
                "default": {"description": "failed: tried again on the retry schedule"},
            },
        }
    }


def _header(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": True,
        "description": description,
        "schema": {"type": "string"},
    }


def examples() -> list[AccountEvent]:
    """One event of each type, as the timeline of one incident would show them, and a
    schedule's handoff."""
    common = {"incident_id": INCIDENT, "at": AT, "actor": {"user_id": ALICE}}
    kinds: list[dict[str, Any]] = [
        {"type": "incident.created", "version": 1, "incident": _summary(1, "TRIGGERED", "SEV2"),
         "participants": [{"participant_id": ALICE, "role": "creator"},
                          {"participant_id": BOB, "role": "assignee"}],
         "participant_count": 2, "backfilled": False},
        {"type": "incident.updated", "version": 2,
         "changes": {"severity": {"from": "SEV2", "to": "SEV1"}}},
        {"type": "participant.added", "version": 2,
         "participant": {"participant_id": BOB, "role": "responder"}},
        {"type": "note.added", "version": 2, "note": {"text": "Rolled back deploy 4812"}},
        {"type": "alert.received", "version": 2, "actor": {"user_id": INTEGRATION},
         "alert": {"integration_id": INTEGRATION, "dedup_key": "checkout/p99",
                   "summary": "Checkout p99 at 2.4 s", "source": "prometheus",
                   "severity": "critical", "alerts": 12}},
        {"type": "incident.escalated", "version": 2,
         "escalation": {"policy_id": POLICY, "policy_version": 3, "level": 2,
                        "reassigned": False}},
        {"type": "escalation.level", "version": 2, "actor": {"user_id": POLICY},
         "page": {"user_id": BOB, "policy_id": POLICY, "policy_version": 3,
                  "rule_id": f"{POLICY}#1", "level": 1, "loop": 0,
                  "schedule_id": SCHEDULE, "schedule_version": 3}},
        {"type": "notification.sent", "version": 2, "actor": {"user_id": POLICY},
         "notification": {"user_id": BOB, "contact_method_id": "cm_2J9dTv6Rh8BrU7hO4jC0tEfXzSa",
                          "notification_rule_id": "nr_2J9dTw8Ti9CsV8iP5kD1uFgYaTb",
                          "channel": "sms", "level": 1, "loop": 0, "attempts": 1,
                          "message_id": "0f8c4e2a-6b1d-4f3e-9a7c-5d2e8b1f4a6c",
                          "reason": None}},
        {"type": "notification.failed", "version": 2, "actor": {"user_id": POLICY},
         "notification": {"user_id": BOB, "contact_method_id": "cm_2J9dTx0Vj1DtW9jQ6lE2vGhZbUc",
                          "notification_rule_id": "nr_2J9dTy2Xk2EuX0kR7mF3wHiAcVd",
                          "channel": "email", "level": 1, "loop": 0, "attempts": 5,
                          "message_id": None, "reason": "throttled"}},
        {"type": "participant.removed", "version": 2,
         "participant": {"participant_id": BOB, "role": "responder"}},
        {"type": "incident.resolved", "version": 3,
         "changes": {"status": {"from": "TRIGGERED", "to": "RESOLVED"}}},
        {"type": "incident.reopened", "version": 4,
         "changes": {"status": {"from": "RESOLVED", "to": "ACKNOWLEDGED"}}},
    ]  # fmt: skip
    sent = next(kind for kind in kinds if kind["type"] == "notification.sent")
    kinds.insert(kinds.index(sent) + 1, {**sent, "type": "notification.delivered"})
    changes: list[AccountEvent] = [
        EVENTS.validate_python({"id": f"evt_2J9dTp{seq:021d}", "seq": seq, **common, **kind})
        for seq, kind in enumerate(kinds, start=1)
    ]
    handoff = ACCOUNT_EVENTS.validate_python(
        {"id": "evt_2J9dTr8Lc4XnQ3dK0fY6pAbTvOw", "type": "schedule.handoff", "at": AT,
         "schedule": {"id": SCHEDULE, "name": "Payments on-call", "version": 3},
         "user_id": BOB, "previous_user_id": ALICE, "shift_start": "2026-11-24T08:40:00.000000Z",
         "shift_end": "2026-12-01T08:40:00.000000Z"}
    )  # fmt: skip
    return [*changes, handoff]


def _summary(version: int, status: str, severity: str) -> IncidentSummary:
    return IncidentSummary.model_validate(
        {"id": INCIDENT, "number": 42, "title": "Checkout: p99 latency above 2 s",
         "status": status, "severity": severity, "created_by": ALICE, "created_at": AT,
         "updated_at": AT, "version": version}
    )  # fmt: skip


def _event_example(event: AccountEvent) -> dict[str, Any]:
    """The body of `event` as it is sent (written by the code that writes bodies)."""
    if isinstance(event, ScheduleHandoff):
        handed: dict[str, Any] = json.loads(event_body(ACCOUNT, event, None))
        return handed
    after = {"incident.updated": ("TRIGGERED", "SEV1"), "incident.resolved": ("RESOLVED", "SEV1"),
             "incident.reopened": ("ACKNOWLEDGED", "SEV1")}  # fmt: skip
    status, severity = after.get(event.type.value, ("TRIGGERED", "SEV2"))
    body: dict[str, Any] = json.loads(
        event_body(ACCOUNT, event, _summary(event.version, status, severity))
    )
    return body


def _test_example() -> dict[str, Any]:
    body = test_body(
        ACCOUNT, "wh_2J9dTn4Qb1ZkN0aH7cV3mXyPqLs", "evt_2J9dTq6Rb3ZmP2cJ9eX5oZaRsNu", AT
    )
    sent: dict[str, Any] = json.loads(body)
    return sent


def example_documents(kind: str) -> dict[str, Any]:
    """One example per type, by type: ``events`` as the timeline shows them, ``bodies`` as
    a webhook receives them (the docs render them; the document's webhooks hold the same)."""
    if kind == "events":
        return {
            event.type.value: event.model_dump(mode="json", by_alias=True) for event in examples()
        }
    return {
        **{event.type.value: _event_example(event) for event in examples()},
        "webhook.test": _test_example(),
    }
