"""What monitoring tools send (PagerDuty's Events API v2 shape, so Alertmanager's and
EventBridge's PagerDuty settings work unchanged) and what integrations are."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    model_validator,
)

from incidents.alerts.urgency import (
    ALWAYS_HIGH,
    NEEDS_HOURS,
    SupportHours,
    UrgencyRule,
    lacks_hours,
    urgency_at,
)
from incidents.contacts.models import Urgency
from incidents.escalation.models import EscalationPolicyId
from incidents.models import (
    INTEGRATION_PREFIX,
    KSUID,
    RESPONSE,
    TITLE_MAX,
    Page,
    Severity,
    TeamId,
    Timestamp,
)
from incidents.requests import CleanName, JsonInteger, OneLine, documented, never_null, stored_text
from incidents.text import FLATTENED_CHARACTERS, IN_CONTEXT, REFUSED_CLASS, TEXT_RULES, one_line

INTEGRATION_ID = rf"^{INTEGRATION_PREFIX}_{KSUID}$"
TIMEOUT_MAX_SECONDS = 30 * 24 * 3600
LifecycleTimeout = Annotated[int, Field(ge=60, le=TIMEOUT_MAX_SECONDS)]
"""A minute to thirty days: the sweep fires within a minute, so less means nothing."""
DEDUP_KEY_MAX = 255
"""PagerDuty's limit for a dedup key."""
SUMMARY_MAX = 1024
"""PagerDuty's limit for a summary; an incident's title keeps its first `TITLE_MAX`."""
SOURCE_MAX = 255
"""PagerDuty's limit for a source: a longer one is cut to it (`cut_to`), not refused."""
LINE_MAX = 1024
"""A component, group, class, client, link text or image text at most."""
URL_MAX = 2048
MAX_LINKS = 20
HTTP_URL = rf"^[Hh][Tt][Tt][Pp][Ss]?://[^\s{REFUSED_CLASS}]+$"
HTTPS_URL = rf"^[Hh][Tt][Tt][Pp][Ss]://[^\s{REFUSED_CLASS}]+$"
"""http(s) URLs with nothing a text may not hold (the document says what `clean_text` checks)."""


class EventAction(StrEnum):
    """What an alert asks for."""

    TRIGGER = "trigger"
    ACKNOWLEDGE = "acknowledge"
    RESOLVE = "resolve"


class AlertSeverity(StrEnum):
    """PagerDuty's severities, each mapped to one of ours (`SEVERITIES`)."""

    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


SEVERITIES = {
    AlertSeverity.CRITICAL: Severity.SEV1,
    AlertSeverity.ERROR: Severity.SEV2,
    AlertSeverity.WARNING: Severity.SEV3,
    AlertSeverity.INFO: Severity.SEV4,
}
"""critical is SEV1, error SEV2, warning SEV3, info SEV4 (SEV5 is for people to choose)."""


def _one_line(value: object) -> object:
    return one_line(value) if isinstance(value, str) else value


def _flattened(max_characters: int) -> Any:
    """The document's rules for an alert's text: made one line, then a title's rules."""
    rules = (
        "Made one line first: each control character (a newline, a tab) and line or "
        f"paragraph separator becomes a space. Then: {TEXT_RULES} At most "
        f"{max_characters:,} characters, counted in NFC."
    )
    return documented(max_characters, rules, FLATTENED_CHARACTERS)


def cut_to(text: str, max_characters: int) -> str:
    """`text` (in NFC) within `max_characters`: a longer one keeps its head and ends in an
    ellipsis, with no joiner or selector left dangling where it was cut."""
    text = unicodedata.normalize("NFC", text)
    if len(text) <= max_characters:
        return text
    return text[: max_characters - 1].rstrip("".join(IN_CONTEXT)) + "…"


def _cut(max_characters: int) -> Any:
    """Alert text taken whatever its length: cut to `max_characters` (`cut_to`), and the
    document says so instead of naming a limit a sender would be refused at."""
    rules = (
        "Made one line first: each control character (a newline, a tab) and line or "
        f"paragraph separator becomes a space. Then: {TEXT_RULES} Longer than "
        f"{max_characters:,} characters (counted in NFC), it is cut to that, the last "
        "an ellipsis (…), not refused."
    )
    return (
        AfterValidator(lambda text: cut_to(text, max_characters)),
        Field(description=rules, json_schema_extra={"pattern": FLATTENED_CHARACTERS}),
    )


def _in_utc(value: datetime) -> datetime:
    """A sent time in UTC (one without an offset is taken as UTC); one whose UTC falls
    outside the calendar (``0001-01-01T00:00:00+14:00``) is a 400, not an overflow."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("is outside the years 1 to 9999 once in UTC") from None


def _written(value: object) -> object:
    """A time as the document says it comes: a string (not a number of seconds)."""
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 date-time string")
    return value


SentTime = Annotated[datetime, BeforeValidator(_written), AfterValidator(_in_utc)]
"""When a monitoring tool saw something, in UTC."""
FLATTEN = BeforeValidator(_one_line)
"""What monitoring tools' templates send (a multi-line summary) is made one line, not refused."""
AlertSummary = Annotated[str, FLATTEN, OneLine, stored_text(SUMMARY_MAX), _flattened(SUMMARY_MAX)]
AlertSource = Annotated[str, FLATTEN, OneLine, *_cut(SOURCE_MAX), stored_text(SOURCE_MAX)]
AlertLine = Annotated[str, FLATTEN, OneLine, stored_text(LINE_MAX), _flattened(LINE_MAX)]
DedupKey = Annotated[str, FLATTEN, OneLine, stored_text(DEDUP_KEY_MAX), _flattened(DEDUP_KEY_MAX)]
HttpUrl = Annotated[
    str,
    StringConstraints(min_length=1, max_length=URL_MAX, pattern=HTTP_URL),
    stored_text(URL_MAX),
]
"""An http(s) URL, as sent (no ``javascript:`` or ``data:`` link reaches a browser)."""


def _blank_is_unset(value: object) -> object:
    return None if isinstance(value, str) and not value.strip() else value


def _empty_documented(schema: dict[str, Any]) -> None:
    """The document says an empty string is taken (as unset)."""
    schema["anyOf"].insert(-1, {"type": "string", "maxLength": 0})


BLANK_IS_UNSET = BeforeValidator(_blank_is_unset)
"""An optional field sent empty (Alertmanager's and Grafana's unset fields) is unset."""
EMPTY_IS_UNSET = Field(json_schema_extra=_empty_documented)
OptionalLine = Annotated[AlertLine | None, BLANK_IS_UNSET, EMPTY_IS_UNSET]
OptionalUrl = Annotated[HttpUrl | None, BLANK_IS_UNSET, EMPTY_IS_UNSET]
HttpsUrl = Annotated[
    str,
    StringConstraints(min_length=1, max_length=URL_MAX, pattern=HTTPS_URL),
    stored_text(URL_MAX),
]


class TriggerPayload(BaseModel):
    """What happened."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    summary: AlertSummary
    source: AlertSource
    severity: AlertSeverity
    timestamp: SentTime | None = None
    """When the monitoring tool saw it (one ahead of the server's clock orders as now)."""
    component: OptionalLine = None
    group: OptionalLine = None
    class_: OptionalLine = Field(default=None, alias="class")
    custom_details: dict[str, Any] | None = None
    _sent_summary: str | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_sent_summary(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """The summary as sent, where making it one line changed it (the details keep it)."""
        payload = handler(data)
        sent = data.get("summary") if isinstance(data, dict) else None
        if isinstance(sent, str) and one_line(sent) != sent:
            payload._sent_summary = sent
        return payload

    @property
    def sent_summary(self) -> str | None:
        """The summary with its line breaks, if it had any."""
        return self._sent_summary


class MovePayload(BaseModel):
    """An acknowledge's or a resolve's payload: only its time is read."""

    model_config = ConfigDict(extra="ignore")

    timestamp: SentTime | None = None
    """When the monitoring tool saw it: one older than the key's incident is for an earlier
    incident of the key, and moves nothing."""


class Link(BaseModel):
    """A link to show with the alert (http or https only)."""

    href: HttpUrl
    text: OptionalLine = None


class Image(BaseModel):
    """An image to show with the alert: served over https, optionally a link."""

    src: HttpsUrl
    href: OptionalUrl = None
    alt: OptionalLine = None


class AlertBase(BaseModel):
    """What every alert may carry (fields PagerDuty's API takes and this one does not read
    are ignored)."""

    model_config = ConfigDict(extra="ignore")

    routing_key: str | None = None
    """The integration key, if not sent as ``Authorization``."""
    links: list[Link] = Field(default_factory=list, max_length=MAX_LINKS)


class TriggerAlert(AlertBase):
    """Something is wrong: open the key's incident, or join it."""

    event_action: Literal[EventAction.TRIGGER]
    dedup_key: DedupKey | None = None
    """The alert's key (one incident per key while it is open); generated when absent."""
    payload: TriggerPayload
    images: list[Image] = Field(default_factory=list, max_length=MAX_LINKS)
    client: OptionalLine = None
    """The monitoring tool's name, shown with a link to it (`client_url`)."""
    client_url: OptionalUrl = None


class MoveAlert(AlertBase):
    """Acknowledge or resolve the key's incident."""

    event_action: Literal[EventAction.ACKNOWLEDGE, EventAction.RESOLVE]
    dedup_key: DedupKey
    payload: MovePayload | None = None


AlertEvent = Annotated[TriggerAlert | MoveAlert, Field(discriminator="event_action")]
"""One alert, as PagerDuty's Events API v2 takes it, told apart by ``event_action``."""
ALERT_EVENTS: TypeAdapter[AlertEvent] = TypeAdapter(AlertEvent)


class ChangePayload(BaseModel):
    """What changed (a deploy, a configuration push, a feature flag)."""

    model_config = ConfigDict(extra="ignore")

    summary: AlertSummary
    source: Annotated[AlertSource | None, BLANK_IS_UNSET, EMPTY_IS_UNSET] = None
    timestamp: SentTime | None = None
    """When it changed (one ahead of the server's clock is taken as now)."""
    custom_details: dict[str, Any] | None = None


class ChangeEvent(BaseModel):
    """A change event, as PagerDuty's Change Events API takes it."""

    model_config = ConfigDict(extra="ignore")

    routing_key: str | None = None
    """The integration key, if not sent as ``Authorization``."""
    payload: ChangePayload
    links: list[Link] = Field(default_factory=list, max_length=MAX_LINKS)
    images: list[Image] = Field(default_factory=list, max_length=MAX_LINKS)


class Change(BaseModel):
    """A change in the account's change log."""

    model_config = RESPONSE

    id: str
    at: Timestamp
    """When it changed (as sent, or when it was received)."""
    integration_id: str
    team_id: str | None
    """The integration's team when it was sent."""
    summary: str
    source: str | None
    custom_details: dict[str, Any] | None
    links: list[Link]
    images: list[Image]


class ChangeRecorded(BaseModel):
    """The answer to a change event (202)."""

    model_config = RESPONSE

    status: Literal["recorded"]
    id: str


class ChangeList(Page[Change]):
    """A page of the account's change log, newest first."""


class SuppressedStatus(StrEnum):
    """A suppressed alert's state as its alerts left it (PagerDuty's alert statuses)."""

    TRIGGERED = "triggered"
    """Still firing: a trigger came (or only an acknowledge, which ends nothing)."""
    RESOLVED = "resolved"
    """A resolve came, or its window's end resolved it (``resolve_on_end``)."""


class AlertStatus(StrEnum):
    """What an alert did."""

    OPENED = "opened"
    """A trigger opened a new incident."""
    ATTACHED = "attached"
    """A trigger joined the key's open incident."""
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    IGNORED = "ignored"
    """An acknowledge or resolve with no open incident for its key, or older than it."""
    SUPPRESSED = "suppressed"


class AlertAccepted(BaseModel):
    """The answer to an alert (202)."""

    model_config = RESPONSE

    status: AlertStatus
    dedup_key: str
    incident_id: str | None
    """The incident the alert opened, joined or moved; null when it moved none."""


class GroupingType(StrEnum):
    """How an integration's triggers find an incident to join (PagerDuty's alert grouping)."""

    NONE = "none"
    """By their ``dedup_key`` alone."""
    TIME = "time"
    """Any trigger of the integration joins its open incident within the window."""
    CONTENT_BASED = "content_based"
    """A trigger joins the open incident of a trigger whose chosen fields were equal."""


class Aggregate(StrEnum):
    """Which of the chosen fields must be equal (content-based grouping)."""

    ALL = "all"
    ANY = "any"


GROUPING_FIELD = (
    r"^(summary|source|severity|component|group|class|custom_details\.[A-Za-z0-9_-]{1,64})$"
)
GroupingField = Annotated[str, StringConstraints(pattern=GROUPING_FIELD)]
"""A payload field a content-based grouping compares: one of the payload's own, or a
top-level key of its ``custom_details`` (``custom_details.<key>``)."""
MAX_GROUPING_FIELDS = 10
WINDOW_RULE = "a whole number of seconds from 300 to 3,600, or 86,400 (a day)"


def _grouping_window(seconds: int) -> int:
    """The rule named in words: a union of ranges would spell pydantic's branches instead."""
    if 300 <= seconds <= 3600 or seconds == 86400:
        return seconds
    raise ValueError(f"time_window is {WINDOW_RULE}")


GroupingWindow = Annotated[
    JsonInteger,
    AfterValidator(_grouping_window),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 300, "maximum": 3600},
                {"type": "integer", "const": 86400},
            ],
            "description": f"PagerDuty's windows: {WINDOW_RULE}.",
        }
    ),
]
"""PagerDuty's windows: 5 minutes to an hour, or a day; an integer (not ``"300"`` or
``300.0``)."""


class NoGrouping(BaseModel):
    """Triggers find their incident by their ``dedup_key`` alone."""

    model_config = ConfigDict(extra="forbid")

    type: Literal[GroupingType.NONE]


class TimeGrouping(BaseModel):
    """Every trigger of the integration joins its open incident while the window lasts:
    rolling, from the most recently grouped alert (null: until the incident resolves)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal[GroupingType.TIME]
    time_window: GroupingWindow | None = None


UNIQUE_ITEMS = {"uniqueItems": True}


def _unique(fields: list[str]) -> list[str]:
    if len(set(fields)) != len(fields):
        raise ValueError("each field at most once")
    return fields


class ContentGrouping(BaseModel):
    """A trigger joins the open incident of an earlier trigger whose chosen fields were
    equal (``all`` of them, or ``any`` one), within the window (rolling; null: until the
    incident resolves)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal[GroupingType.CONTENT_BASED]
    fields: Annotated[
        list[GroupingField],
        Field(min_length=1, max_length=MAX_GROUPING_FIELDS, json_schema_extra=UNIQUE_ITEMS),
        AfterValidator(_unique),
    ]
    aggregate: Aggregate = Aggregate.ALL
    time_window: GroupingWindow | None = None


AlertGrouping = Annotated[NoGrouping | TimeGrouping | ContentGrouping, Field(discriminator="type")]
"""An integration's alert grouping (PagerDuty's ``alert_grouping_parameters``, flat)."""


class NewIntegration(BaseModel):
    """An integration: a key that monitoring tools send alerts with, routed to a team."""

    model_config = ConfigDict(extra="forbid")

    name: CleanName
    team_id: TeamId | None = None
    escalation_policy_id: EscalationPolicyId | None = None
    """The policy that pages people for the incidents it opens (none: nobody is paged)."""
    default_severity: Severity | None = None
    """The severity of the incidents it opens, whatever the alert says (none: the alert's)."""
    auto_resolve_timeout: LifecycleTimeout | None = None
    """Seconds after its last alert an incident it opened resolves (PagerDuty's
    ``auto_resolve_timeout``; none: never by itself)."""
    acknowledgement_timeout: LifecycleTimeout | None = None
    """Seconds after an incident it opened is acknowledged that it returns to triggered
    unless resolved (PagerDuty's ``acknowledgement_timeout``; none: it stays acknowledged)."""
    alert_grouping: AlertGrouping = Field(
        default_factory=lambda: NoGrouping(type=GroupingType.NONE)
    )
    """How its triggers find an incident to join (default: by ``dedup_key`` alone)."""
    incident_urgency_rule: UrgencyRule = ALWAYS_HIGH
    """The urgency of the incidents it opens (default: always ``high``), which decides the
    notification rules that page people."""
    support_hours: SupportHours | None = None
    """When an urgency rule ``use_support_hours`` says "during"."""

    @model_validator(mode="after")
    def _hours_named(self) -> NewIntegration:
        if lacks_hours(self.incident_urgency_rule, self.support_hours):
            raise ValueError(NEEDS_HOURS)
        return self


class IntegrationChanges(BaseModel):
    """Fields of an integration to change: at least one (``null`` clears the team, the
    default severity or a timeout)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=never_null(
            "name", "alert_grouping", "incident_urgency_rule", at_least_one=True
        ),
    )

    name: CleanName | None = None
    team_id: TeamId | None = None
    escalation_policy_id: EscalationPolicyId | None = None
    default_severity: Severity | None = None
    auto_resolve_timeout: LifecycleTimeout | None = None
    acknowledgement_timeout: LifecycleTimeout | None = None
    alert_grouping: AlertGrouping | None = None
    incident_urgency_rule: UrgencyRule | None = None
    support_hours: SupportHours | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> IntegrationChanges:
        if not self.model_fields_set:
            raise ValueError(
                "name it: at least one of name, team_id, escalation_policy_id, "
                "default_severity, auto_resolve_timeout, acknowledgement_timeout, "
                "alert_grouping, incident_urgency_rule, support_hours"
            )
        if "name" in self.model_fields_set and self.name is None:
            raise ValueError("name: an integration keeps a name")
        if "alert_grouping" in self.model_fields_set and self.alert_grouping is None:
            raise ValueError('alert_grouping: send {"type": "none"} to stop grouping')
        if "incident_urgency_rule" in self.model_fields_set and self.incident_urgency_rule is None:
            raise ValueError('incident_urgency_rule: send {"type": "constant", "urgency": "high"}')
        return self


class Integration(BaseModel):
    """An integration as the API shows it (the key only on creation and rotation)."""

    model_config = RESPONSE

    id: str
    name: str
    team_id: str | None
    escalation_policy_id: str | None = None
    """The policy that pages people for the incidents it opens (null: nobody is paged)."""
    default_severity: Severity | None
    auto_resolve_timeout: int | None
    """Seconds after its last alert an incident it opened resolves (null: never by itself)."""
    acknowledgement_timeout: int | None
    """Seconds after an incident it opened is acknowledged that it returns to triggered
    unless resolved (null: it stays acknowledged)."""
    alert_grouping: AlertGrouping
    incident_urgency_rule: UrgencyRule = ALWAYS_HIGH
    """The urgency of the incidents it opens."""
    support_hours: SupportHours | None = None
    key_hint: str
    """The key's last four characters, to tell keys apart."""
    created_at: Timestamp
    last_used_at: Timestamp | None

    def urgency_at(self, moment: datetime) -> Urgency:
        """The urgency of an incident it opens at `moment`."""
        return urgency_at(self.incident_urgency_rule, self.support_hours, moment)


class IntegrationWithKey(Integration):
    """An integration with its key: shown once, when created or rotated."""

    key: str


class IntegrationList(BaseModel):
    """The account's integrations, oldest first (never their keys)."""

    model_config = RESPONSE

    items: list[Integration]


def title_of(summary: str) -> str:
    """An incident's title from an alert's summary: the summary, clipped to `TITLE_MAX`."""
    return cut_to(summary, TITLE_MAX)


class AlertCount(BaseModel):
    """How many alerts an incident received (the one that opened it included; 0 for one a
    person opened)."""

    model_config = RESPONSE

    incident_id: str
    alerts: int
