"""An incident's log entries in PagerDuty's shape (PagerDuty's
``GET /incidents/{id}/log_entries``, ours ``/log-entries``):
its timeline read through the kinds of entry PagerDuty writes (trigger, acknowledge,
unacknowledge, resolve, annotate, assign, escalate, notify), so a tool built on
PagerDuty's log reads ours. Each entry is one timeline event, with the event's id; events
PagerDuty logs nothing for (a title or participant change, alerts joining) are left out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from incidents.models import (
    RESPONSE,
    EscalationPaged,
    EventType,
    IncidentChanged,
    IncidentCreated,
    IncidentEscalated,
    NoteAdded,
    NotificationOutcome,
    Page,
    Status,
    TimelineEvent,
    Timestamp,
)
from incidents.store import Caller, Store
from incidents.timeline.events import require_counted
from incidents.timeline.queries import EventRequest, incident_timeline

LogEntryType = Literal[
    "trigger_log_entry",
    "acknowledge_log_entry",
    "unacknowledge_log_entry",
    "resolve_log_entry",
    "annotate_log_entry",
    "assign_log_entry",
    "escalate_log_entry",
    "notify_log_entry",
]
LOGGED_EVENTS = (
    EventType.CREATED,
    EventType.UPDATED,
    EventType.RESOLVED,
    EventType.REOPENED,
    EventType.NOTE_ADDED,
    EventType.ESCALATED,
    EventType.ESCALATION_LEVEL,
    EventType.NOTIFICATION_SENT,
    EventType.NOTIFICATION_DELIVERED,
    EventType.NOTIFICATION_FAILED,
)
"""The timeline events an entry can come from (read with a filter: DynamoDB bills the
events between them too)."""
REFERENCE_TYPES = {
    "user": "user_reference",
    "intg": "integration_reference",
    "key": "api_key_reference",
    "ep": "escalation_policy_reference",
}


class Reference(BaseModel):
    """What PagerDuty calls a reference: an id and its kind."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: str
    type: str = Field(description="user_reference, integration_reference, incident_reference…")


class LogNotification(BaseModel):
    """A notification's outcome, as a notify entry's channel carries it."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    type: str = Field(description="email_notification, sms_notification, phone_notification "
                      "or slack_notification")  # fmt: skip
    status: Literal["sent", "delivered", "failed"]
    message_id: str | None = Field(description="the provider's id of the message")
    reason: str | None = Field(description="why it failed")


class LogChannel(BaseModel):
    """How the entry's action came: ``api``, ``timeout`` (a lifecycle timer) or ``auto``
    (the escalation policy), with a notify entry's notification."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    type: Literal["api", "timeout", "auto"]
    notification: LogNotification | None = None


class LogEntry(BaseModel):
    """One entry of an incident's log (PagerDuty's ``LogEntry``)."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: str = Field(description="the timeline event's id")
    type: LogEntryType
    summary: str
    created_at: Timestamp
    agent: Reference = Field(description="who did it: a user, an integration, an API key or "
                             "the escalation policy")  # fmt: skip
    channel: LogChannel
    incident: Reference
    user: Reference | None = Field(description="the person notified (a notify entry)")
    assignees: list[Reference] | None = Field(description="who was paged (assign, escalate)")
    note: str | None = Field(description="the note (an annotate entry)")
    event_details: dict[str, str | int | None] | None = Field(
        description="what chose the person paged: policy, rule and schedule with versions"
    )


class LogEntryList(Page[LogEntry]):
    """One page of an incident's log entries (fewer than the limit when the timeline's
    events there are not logged; follow ``next_cursor`` while ``has_more``)."""


def incident_log_entries(
    store: Store, caller: Caller, incident_id: str, request: EventRequest
) -> LogEntryList:
    """A page of the incident's log, from a page of its timeline's logged kinds."""
    counted = require_counted(store, caller, incident_id)  # 404 if not the caller's
    logged = EventRequest(request.page, LOGGED_EVENTS)
    page = incident_timeline(store, caller, incident_id, logged, counted)
    number = counted.summary.number
    entries = [entry for event in page.items if (entry := log_entry(event, number)) is not None]
    return LogEntryList(items=entries, next_cursor=page.next_cursor, has_more=page.has_more)


def log_entry(event: TimelineEvent, number: int | None = None) -> LogEntry | None:
    """The entry PagerDuty would log for `event`; None for a change it logs nothing for."""
    shown = _shown(event, number)
    if shown is None:
        return None
    timed = isinstance(event, IncidentChanged) and event.timeout is not None
    return LogEntry(
        id=event.id,
        type=shown.type,
        summary=shown.summary,
        created_at=event.at,
        agent=reference(event.actor.user_id),
        channel=shown.channel or LogChannel(type="timeout" if timed else "api"),
        incident=Reference(id=event.incident_id, type="incident_reference"),
        user=shown.user,
        assignees=shown.assignees,
        note=shown.note,
        event_details=shown.event_details,
    )


@dataclass(frozen=True)
class Shown:
    """What an entry says besides what every entry has."""

    type: LogEntryType
    summary: str
    channel: LogChannel | None = None
    """None: ``api``, or ``timeout`` for a lifecycle timer's change."""
    user: Reference | None = None
    assignees: list[Reference] | None = None
    note: str | None = None
    event_details: dict[str, str | int | None] | None = None


def _shown(event: TimelineEvent, number: int | None) -> Shown | None:
    """The entry's type, its one-line summary and its other fields, by the event's kind
    (None for participants and alerts joining: PagerDuty logs neither)."""
    name = f"#{number}" if number is not None else event.incident_id
    show = SHOWN.get(type(event))
    return None if show is None else show(event, name)


def _created(event: IncidentCreated, name: str) -> Shown:
    return Shown("trigger_log_entry", f"Triggered {name}: {event.incident.title}")


def _noted(event: NoteAdded, name: str) -> Shown:
    return Shown("annotate_log_entry", f"Note added to {name}", note=event.note.text)


def _status_change(event: IncidentChanged, name: str) -> Shown | None:
    change = event.changes.status
    if change is None:
        return None  # a title or severity alone
    if change.to is Status.ACKNOWLEDGED:
        return Shown("acknowledge_log_entry", f"Acknowledged {name}")
    if change.to is Status.RESOLVED:
        return Shown("resolve_log_entry", f"Resolved {name}")
    if change.from_ is Status.RESOLVED:
        return Shown("trigger_log_entry", f"Reopened {name}")
    return Shown("unacknowledge_log_entry", f"Unacknowledged {name}")


def _escalated(event: IncidentEscalated, name: str) -> Shown:
    """A person's escalation (PagerDuty logs it as theirs: the pages follow as the
    policy's)."""
    moved = event.escalation
    verb = "Reassigned" if moved.reassigned else "Escalated"
    return Shown(
        "assign_log_entry" if moved.reassigned else "escalate_log_entry",
        f"{verb} {name} to level {moved.level} of {moved.policy_id}",
        event_details={
            "policy_id": moved.policy_id,
            "policy_version": moved.policy_version,
            "level": moved.level,
        },
    )


def _paged(event: EscalationPaged, _: str) -> Shown:
    page = event.page
    first = page.level == 1 and page.loop == 0
    verb = "Assigned" if first else f"Escalated to level {page.level} (loop {page.loop})"
    return Shown(
        "assign_log_entry" if first else "escalate_log_entry",
        f"{verb}: {page.user_id}",
        channel=LogChannel(type="auto"),
        assignees=[Reference(id=page.user_id, type="user_reference")],
        event_details={
            "policy_id": page.policy_id, "policy_version": page.policy_version,
            "rule_id": page.rule_id, "level": page.level, "loop": page.loop,
            "schedule_id": page.schedule_id, "schedule_version": page.schedule_version,
        },
    )  # fmt: skip


NOTIFIED = {
    EventType.NOTIFICATION_SENT: ("sent", "Notified"),
    EventType.NOTIFICATION_DELIVERED: ("delivered", "Delivered a notification to"),
    EventType.NOTIFICATION_FAILED: ("failed", "Failed to notify"),
}


def _notified(event: NotificationOutcome, _: str) -> Shown:
    sent = event.notification
    status, verb = NOTIFIED[event.type]
    kind = "phone" if sent.channel == "voice" else sent.channel
    notification = LogNotification.model_validate({"type": f"{kind}_notification",
        "status": status, "message_id": sent.message_id, "reason": sent.reason})  # fmt: skip
    return Shown(
        "notify_log_entry",
        f"{verb} {sent.user_id} by {sent.channel}",
        channel=LogChannel(type="auto", notification=notification),
        user=Reference(id=sent.user_id, type="user_reference"),
    )


SHOWN: dict[type, Callable[[Any, str], Shown | None]] = {
    IncidentCreated: _created,
    IncidentChanged: _status_change,
    NoteAdded: _noted,
    IncidentEscalated: _escalated,
    EscalationPaged: _paged,
    NotificationOutcome: _notified,
}
"""How each kind of event an entry comes from is shown (its event and the incident's
name)."""


def reference(actor: str) -> Reference:
    """A reference to whoever acted (its id's prefix tells its kind)."""
    return Reference(id=actor, type=REFERENCE_TYPES.get(actor.split("_", 1)[0], "reference"))
