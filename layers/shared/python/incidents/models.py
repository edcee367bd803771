"""The incident domain's item types, as pydantic models.

Models carry what the API shows; `items` turns them into DynamoDB items and back, so
no key attribute (``PK``, ``GSI1PK``, ...) ever reaches a response.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, computed_field

KSUID = r"[0-9A-Za-z]{27}"
INCIDENT_ID = rf"^inc_{KSUID}$"
TEAM_ID = rf"^team_{KSUID}$"
USER_ID = rf"^user_{KSUID}$"
PARTICIPANT_ID = rf"^(user|team)_{KSUID}$"
EVENT_ID = rf"^evt_{KSUID}$"
ACCOUNT_ID = rf"^acct_{KSUID}$"
IncidentId = Annotated[str, StringConstraints(pattern=INCIDENT_ID)]
TeamId = Annotated[str, StringConstraints(pattern=TEAM_ID)]
UserId = Annotated[str, StringConstraints(pattern=USER_ID)]
ParticipantId = Annotated[str, StringConstraints(pattern=PARTICIPANT_ID)]
EventId = Annotated[str, StringConstraints(pattern=EVENT_ID)]
"""A user or a team: both can take part in an incident."""
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
RFC3339 = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$"
"""An RFC 3339 instant with its offset (``Z`` or ``+01:00``), at most microseconds."""
"""An RFC 3339 instant in UTC, as `timestamp` writes it."""
TITLE_MAX = 200
NAME_MAX = 100
EMAIL_MAX = 254
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=TITLE_MAX)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=NAME_MAX)]


class Status(StrEnum):
    """Where an incident is in its life."""

    TRIGGERED = "TRIGGERED"
    ACKNOWLEDGED = "ACKNOWLEDGED"
    RESOLVED = "RESOLVED"


class State(StrEnum):
    """What lists care about: open (triggered or acknowledged) or closed (resolved)."""

    OPEN = "OPEN"
    CLOSED = "CLOSED"


class Severity(StrEnum):
    """SEV1 is the worst."""

    SEV1 = "SEV1"
    SEV2 = "SEV2"
    SEV3 = "SEV3"
    SEV4 = "SEV4"
    SEV5 = "SEV5"


class Role(StrEnum):
    """Why a participant is on an incident; a participant may have several."""

    CREATOR = "creator"
    ASSIGNEE = "assignee"
    RESPONDER = "responder"
    TEAM = "team"


def state_of(status: Status) -> State:
    """The state a status belongs to."""
    return State.CLOSED if status is Status.RESOLVED else State.OPEN


def utc_now() -> datetime:
    """Now, in UTC with microseconds: the fixed width sort keys rely on."""
    return datetime.now(UTC)


def timestamp(moment: datetime) -> str:
    """ISO-8601 UTC with a fixed width (``2026-11-23T06:50:50.000000Z``), so it sorts as text."""
    utc = moment.astimezone(UTC)
    return f"{utc.year:04d}-" + utc.strftime("%m-%dT%H:%M:%S.%fZ")  # %Y does not pad 999


def parse_timestamp(text: str) -> datetime:
    """An RFC 3339 instant (`timestamp`'s, or any with its offset) as an aware datetime;
    ValueError for a date that does not exist."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


RESPONSE = ConfigDict(
    json_schema_mode_override="serialization", json_schema_serialization_defaults_required=True
)
"""A model the API answers with: its schema is what an answer holds (a field with a default
and a computed field are always there, so generated clients type them as required)."""


class IncidentSummary(BaseModel):
    """The small, frequently read part of an incident; copied onto every participation."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: IncidentId
    number: int = Field(ge=1)
    title: Title
    status: Status
    severity: Severity
    created_by: UserId
    created_at: Timestamp
    updated_at: Timestamp
    version: int = Field(ge=1)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> State:
        """OPEN or CLOSED, derived from the status."""
        return state_of(self.status)


class Participation(BaseModel):
    """One participant (user or team) on one incident, with a copy of the summary."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    participant_id: ParticipantId
    roles: list[Role]
    incident: IncidentSummary


class Incident(BaseModel):
    """An incident as GET returns it: summary, details and participants."""

    model_config = RESPONSE

    summary: IncidentSummary
    details: dict[str, Any]
    participants: list[Participation] = Field(default_factory=list)


class Team(BaseModel):
    """A team of users in one account."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: TeamId
    name: Name
    created_by: UserId
    created_at: Timestamp


class Membership(BaseModel):
    """A user's membership of a team."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    team_id: TeamId
    user_id: UserId
    added_at: Timestamp


class User(BaseModel):
    """A user of one account; identity comes from the authorizer, this is the profile."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: UserId
    name: Name
    email: Annotated[str, StringConstraints(max_length=EMAIL_MAX)] | None = None


class IncidentList(BaseModel):
    """One page of an incident list; pass `next_cursor` back to get the next page."""

    model_config = RESPONSE

    items: list[IncidentSummary]
    next_cursor: str | None
    has_more: bool


class TeamList(BaseModel):
    """The caller's teams."""

    model_config = RESPONSE

    items: list[Team]


class EventType(StrEnum):
    """What happened to an incident: one event type per kind of change."""

    CREATED = "incident.created"
    UPDATED = "incident.updated"
    RESOLVED = "incident.resolved"
    REOPENED = "incident.reopened"
    PARTICIPANT_ADDED = "participant.added"
    PARTICIPANT_REMOVED = "participant.removed"
    NOTE_ADDED = "note.added"


class Actor(BaseModel):
    """Who made a change: the user of the authorizer's claims, never a request field."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    user_id: UserId


class FieldChange(BaseModel):
    """One field's value before and after a change."""

    model_config = ConfigDict(**RESPONSE, frozen=True, populate_by_name=True)

    from_: str = Field(alias="from")
    to: str


class EventParticipant(BaseModel):
    """The participant an event is about, with the role it was added or removed with."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    participant_id: ParticipantId
    role: Role


class Note(BaseModel):
    """A note written on the timeline."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    text: str


class TimelineEvent(BaseModel):
    """One change to an incident. Every event has the fields up to ``version``; the others
    depend on ``type``: ``changes`` (incident.updated, .resolved, .reopened), ``participant``
    (participant.added, .removed), ``note`` (note.added), ``incident``, ``participants`` and
    ``participant_count`` (incident.created). The incident's details are never in an event
    (they may be 350 KB; an event stays one write unit): read them from the incident."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: EventId
    incident_id: IncidentId
    seq: int = Field(ge=1, description="1, 2, 3... per incident, with no gap")
    type: EventType
    at: Timestamp
    actor: Actor
    version: int = Field(ge=1, description="the incident summary's version after the change")
    changes: dict[str, FieldChange] | None = Field(
        default=None, description="each changed field (title, status, severity): from and to"
    )
    participant: EventParticipant | None = None
    note: Note | None = None
    incident: IncidentSummary | None = Field(
        default=None, description="incident.created: the first summary"
    )
    participants: list[EventParticipant] | None = Field(
        default=None, description="incident.created: the first participants (at most 20)"
    )
    participant_count: int | None = Field(
        default=None, description="incident.created: how many participants it started with"
    )
    backfilled: bool | None = Field(
        default=None,
        description="incident.created written by the first change of an incident created "
        "before the timeline existed (its participants are not known)",
    )


class EventList(BaseModel):
    """One page of events; pass `next_cursor` back to get the next page."""

    model_config = RESPONSE

    items: list[TimelineEvent]
    next_cursor: str | None
    has_more: bool
