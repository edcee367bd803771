"""The incident domain's item types, as pydantic models.

Models carry what the API shows; `items` turns them into DynamoDB items and back, so
no key attribute (``PK``, ``GSI1PK``, ...) ever reaches a response.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    computed_field,
)

from incidents.time_zones import zone

KSUID = r"[0-9A-Za-z]{27}"
INCIDENT_ID = rf"^inc_{KSUID}$"
TEAM_ID = rf"^team_{KSUID}$"
USER_ID = rf"^user_{KSUID}$"
PARTICIPANT_ID = rf"^(user|team)_{KSUID}$"
EVENT_ID = rf"^evt_{KSUID}$"
ACCOUNT_ID = rf"^acct_{KSUID}$"
SCHEDULE_ID = rf"^sched_{KSUID}$"
OVERRIDE_ID = rf"^ovr_{KSUID}$"
ESCALATION_POLICY_ID = rf"^ep_{KSUID}$"
FEED_TOKEN = rf"^acct_{KSUID}\.[0-9A-Za-z_-]{{32}}$"
"""A calendar feed's token: its account and a secret (the feed's URL is its credential)."""
IncidentId = Annotated[str, StringConstraints(pattern=INCIDENT_ID)]
TeamId = Annotated[str, StringConstraints(pattern=TEAM_ID)]
UserId = Annotated[str, StringConstraints(pattern=USER_ID)]
ACTOR_ID = rf"^(user|intg|key|ep)_{KSUID}$"
INTEGRATION_PREFIX = "intg"
"""An integration's id prefix: it acts, as the creator of the incidents it opens."""
ActorId = Annotated[
    str,
    StringConstraints(pattern=ACTOR_ID),
    Field(
        description="a user, the integration (intg_…) whose alert did it, the API key "
        "(key_…) a machine called with, or the escalation policy (ep_…) that paged"
    ),
]
ParticipantId = Annotated[str, StringConstraints(pattern=PARTICIPANT_ID)]
EventId = Annotated[str, StringConstraints(pattern=EVENT_ID)]
"""A user or a team: both can take part in an incident."""
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
RFC3339 = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$"
"""An RFC 3339 instant with its offset (``Z`` or ``+01:00``), at most microseconds."""
"""An RFC 3339 instant in UTC, as `timestamp` writes it."""
TITLE_MAX = 200
NOTE_MAX_CHARACTERS = 1000
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


def _instant(value: object) -> datetime:
    """An RFC 3339 instant with its offset, in UTC (a number, a date alone or a time without
    an offset is a 400, not a guess); in code, an aware datetime."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC)
    if not isinstance(value, str) or not re.fullmatch(RFC3339, value):
        raise ValueError("must be an RFC 3339 date-time with its offset, e.g. 2027-01-15T22:00:00Z")
    try:
        return parse_timestamp(value).astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValueError("is not a date-time that exists (in UTC)") from None


Instant = Annotated[
    datetime, BeforeValidator(_instant), Field(json_schema_extra={"pattern": RFC3339})
]


V = TypeVar("V")
P = TypeVar("P")
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
    created_by: ActorId
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
    created_by: ActorId
    """The user who made it, or the API key."""
    created_at: Timestamp


class Membership(BaseModel):
    """A user's membership of a team."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    team_id: TeamId
    user_id: UserId
    added_at: Timestamp


def _known_zone(name: str) -> str:
    zone(name)  # UnknownTimeZoneError (a ValueError) names it
    return name


TimeZoneName = Annotated[
    str,
    AfterValidator(_known_zone),
    Field(
        description="An IANA time zone name, such as America/Chicago", examples=["Europe/London"]
    ),
]
DEFAULT_TIME_ZONE = "UTC"


class UserRole(StrEnum):
    """A user's role in the account, in PagerDuty's names: the account's first user is its
    owner; owners and admins change others' profiles and roles, everyone else their own
    profile."""

    OWNER = "owner"
    ADMIN = "admin"
    USER = "user"
    LIMITED_USER = "limited_user"
    OBSERVER = "observer"
    READ_ONLY_USER = "read_only_user"

    @property
    def manages_users(self) -> bool:
        """Whether it may change other users' profiles and roles."""
        return self in (UserRole.OWNER, UserRole.ADMIN)


class User(BaseModel):
    """A user of one account; identity comes from the authorizer, this is the profile."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: UserId
    name: Name
    email: Annotated[str, StringConstraints(max_length=EMAIL_MAX)] | None = None
    time_zone: Annotated[
        str, Field(description="the IANA time zone the user's times are shown in")
    ] = DEFAULT_TIME_ZONE
    role: UserRole = UserRole.USER


class Page(BaseModel, Generic[P]):
    """One page of a list; each list names its own (``HeartbeatList``: a page of heartbeats),
    so the document's schemas and generated clients keep their names."""

    model_config = RESPONSE

    items: list[P]
    next_cursor: str | None
    has_more: bool


class UserList(Page[User]):
    """One page of the account's users, by id."""


class IncidentList(Page[IncidentSummary]):
    """One page of an incident list; pass `next_cursor` back to get the next page."""


class TeamList(BaseModel):
    """The caller's teams."""

    model_config = RESPONSE

    items: list[Team]


class EventType(StrEnum):
    """What happened: to an incident, one event type per kind of change; or to who is on
    call (a schedule's handoff)."""

    CREATED = "incident.created"
    UPDATED = "incident.updated"
    RESOLVED = "incident.resolved"
    REOPENED = "incident.reopened"
    PARTICIPANT_ADDED = "participant.added"
    PARTICIPANT_REMOVED = "participant.removed"
    NOTE_ADDED = "note.added"
    ALERT_RECEIVED = "alert.received"
    ESCALATED = "incident.escalated"
    ESCALATION_LEVEL = "escalation.level"
    NOTIFICATION_SENT = "notification.sent"
    NOTIFICATION_DELIVERED = "notification.delivered"
    NOTIFICATION_FAILED = "notification.failed"
    SCHEDULE_HANDOFF = "schedule.handoff"


class Actor(BaseModel):
    """Who made a change: the user or the API key the authorizer named, or the integration
    whose key sent the alert; never a request field."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    user_id: ActorId


class FieldChange(BaseModel, Generic[V]):
    """One field's value before and after a change."""

    model_config = ConfigDict(**RESPONSE, frozen=True, populate_by_name=True)

    from_: V = Field(alias="from")
    to: V


class TitleChange(FieldChange[str]):
    """The title before and after."""


class StatusChange(FieldChange[Status]):
    """The status before and after."""


class SeverityChange(FieldChange[Severity]):
    """The severity before and after."""


class Changes(BaseModel):
    """The fields a change moved, each with its value before and after; null for a field
    that did not change (every field is always there, as everywhere in the API)."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    title: TitleChange | None = None
    status: StatusChange | None = None
    severity: SeverityChange | None = None


class EventParticipant(BaseModel):
    """The participant an event is about, with the role it was added or removed with."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    participant_id: ParticipantId
    role: Role


class Note(BaseModel):
    """A note written on the timeline."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    text: str = Field(max_length=NOTE_MAX_CHARACTERS)


class EventBase(BaseModel):
    """What every event has; `TimelineEvent` is one of its kinds, told apart by ``type``."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: EventId
    incident_id: IncidentId
    seq: int = Field(ge=1, description="1, 2, 3... per incident, with no gap")
    at: Timestamp
    actor: Actor
    version: int = Field(ge=1, description="the incident summary's version after the change")


class IncidentCreated(EventBase):
    """Event 1 of an incident: its first summary and participants. The incident's details
    are never in an event (they may be 350 KB; an event stays one write unit)."""

    type: Literal[EventType.CREATED]
    incident: IncidentSummary = Field(description="the first summary")
    participants: list[EventParticipant] = Field(
        description="the first participants, one entry per role (at most 20 entries)"
    )
    participant_count: int | None = Field(
        default=None, description="how many participants it started with (null when backfilled)"
    )
    backfilled: bool = Field(
        default=False,
        description="written by the first change of an incident created before the timeline "
        "existed (its first participants are not known)",
    )


ChangeType = Literal[EventType.UPDATED, EventType.RESOLVED, EventType.REOPENED]


class Timeout(StrEnum):
    """A lifecycle timer that changes an incident by itself (PagerDuty's names)."""

    AUTO_RESOLVE = "auto_resolve_timeout"
    """No alert for the integration's timeout: resolved."""
    ACKNOWLEDGEMENT = "acknowledgement_timeout"
    """Acknowledged and not resolved within the integration's timeout: triggered again."""


class IncidentChanged(EventBase):
    """A change of title, status or severity: resolved or reopened when the status crossed
    between open and resolved, updated otherwise."""

    type: ChangeType
    changes: Changes
    timeout: Timeout | None = Field(
        default=None,
        description="the lifecycle timer that made the change (its actor is the integration "
        "that opened the incident); null when a person or an alert did",
    )


class ParticipantChanged(EventBase):
    """A participant added or removed, with the role it was added or removed with."""

    type: Literal[EventType.PARTICIPANT_ADDED, EventType.PARTICIPANT_REMOVED]
    participant: EventParticipant


class NoteAdded(EventBase):
    """A note written on the timeline."""

    type: Literal[EventType.NOTE_ADDED]
    note: Note


class ReceivedAlert(BaseModel):
    """The alerts of one integration key that joined an incident: the latest one's words and
    how many came since the key's previous ``alert.received`` event (a storm writes one
    event a minute per key, not one per alert; every alert is counted)."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    integration_id: str
    dedup_key: str
    summary: str
    source: str
    severity: str = Field(description="critical, error, warning or info, as the alert said")
    alerts: int = Field(ge=1, description="alerts of this key since its previous such event")


class AlertReceived(EventBase):
    """Alerts joined the incident (a trigger whose key's incident was open)."""

    type: Literal[EventType.ALERT_RECEIVED]
    alert: ReceivedAlert


class ManualEscalation(BaseModel):
    """Where a person started the incident's escalation over: the policy now paging (its
    version the incident keeps) and the level."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    policy_id: str
    policy_version: int = Field(ge=1)
    level: int = Field(ge=1, description="1 for the policy's first rule")
    reassigned: bool = Field(description="given to another policy, from its level 1")


class IncidentEscalated(EventBase):
    """A person escalated the incident to a level of its policy, or reassigned it to
    another policy (its pages follow, as ``escalation.level`` events)."""

    type: Literal[EventType.ESCALATED]
    escalation: ManualEscalation


class PagedPerson(BaseModel):
    """One person an escalation level paged, and what chose them."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    user_id: UserId
    policy_id: str
    policy_version: int = Field(ge=1, description="the policy's version the incident keeps")
    rule_id: str = Field(description="the level's escalation rule")
    level: int = Field(ge=1, description="1 for the policy's first rule")
    loop: int = Field(ge=0, description="0 the first time through the policy")
    schedule_id: str | None = Field(
        default=None, description="the schedule whose on-call person this is (null: named)"
    )
    schedule_version: int | None = Field(
        default=None, description="the schedule's version that had them on call"
    )


class EscalationPaged(EventBase):
    """An escalation level paged a person (one event a person: a level names several)."""

    type: Literal[EventType.ESCALATION_LEVEL]
    page: PagedPerson


class SentNotification(BaseModel):
    """What became of one notification of a page: sent to its provider, delivered, or
    failed."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    user_id: UserId
    contact_method_id: str
    notification_rule_id: str
    channel: Literal["email", "sms", "voice", "slack"]
    level: int = Field(ge=1, description="the escalation level of its page")
    loop: int = Field(ge=0, description="the loop of its page")
    attempts: int = Field(ge=1, description="tries it took")
    message_id: str | None = Field(
        default=None, description="the provider's id of the message (Slack gives none)"
    )
    reason: str | None = Field(default=None, description="why it failed")


class NotificationOutcome(EventBase):
    """A notification of a page was sent, delivered (its provider's receipt said so), or
    failed for good (before it was sent, or by a receipt after); none stops the
    escalation: only an acknowledge does."""

    type: Literal[
        EventType.NOTIFICATION_SENT, EventType.NOTIFICATION_DELIVERED, EventType.NOTIFICATION_FAILED
    ]
    notification: SentNotification


IncidentEventKinds = (
    IncidentCreated
    | IncidentChanged
    | ParticipantChanged
    | NoteAdded
    | AlertReceived
    | IncidentEscalated
    | EscalationPaged
    | NotificationOutcome
)
TimelineEvent = Annotated[IncidentEventKinds, Field(discriminator="type")]
"""One change to an incident: each kind carries only its own fields, told apart by ``type``."""
EVENTS: TypeAdapter[TimelineEvent] = TypeAdapter(TimelineEvent)
"""Validates any kind of event (``EVENTS.validate_python(values)``)."""


class HandoffSchedule(BaseModel):
    """The schedule a handoff happened on, as of the change."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: str
    name: str
    version: int = Field(ge=1, description="the schedule's version the handoff was worked out from")


class ScheduleHandoff(BaseModel):
    """Who is on call for a schedule changed (a shift ended, or an edit or override took
    effect at once): one event per handoff, on the account's events, not on an incident."""

    model_config = ConfigDict(**RESPONSE, frozen=True)

    id: EventId
    type: Literal[EventType.SCHEDULE_HANDOFF]
    at: Timestamp = Field(
        description="when the handoff was written (the sweep fires a shift's end within a "
        "minute or so of it): the events' order and polling horizon"
    )
    schedule: HandoffSchedule
    user_id: UserId | None = Field(description="on call from `shift_start` (null: nobody, a gap)")
    previous_user_id: UserId | None = Field(
        description="on call until `shift_start` (null: nobody)"
    )
    shift_start: Timestamp = Field(description="when the new shift began: the handoff's instant")
    shift_end: Timestamp = Field(
        description="when the new shift ends, as the schedule stood (the next handoff)"
    )


AccountEvent = Annotated[IncidentEventKinds | ScheduleHandoff, Field(discriminator="type")]
"""One event of an account: a change to one of its incidents, or a schedule's handoff."""
ACCOUNT_EVENTS: TypeAdapter[AccountEvent] = TypeAdapter(AccountEvent)


class EventList(Page[TimelineEvent]):
    """One page of events; pass `next_cursor` back to get the next page."""


class EventFeed(Page[AccountEvent]):
    """One page of the account's events; oldest first (the polling order), also where the
    next poll starts."""

    next_since: Timestamp | None = Field(
        description="oldest first, on a walk's last page: the instant it served every event "
        "before (the settled horizon, 15 s before the first page was read); poll again with "
        "since set to it and no event is missed or served twice. Null newest first and on "
        "pages with more to come"
    )


def is_integration(actor: str) -> bool:
    """Whether an actor (an incident's ``created_by``) is an integration."""
    return actor.startswith(f"{INTEGRATION_PREFIX}_")
