"""A schedule as the API takes and shows it, in PagerDuty's REST v2 names: a time zone,
ordered layers of rotations with restrictions, rendered entries; with the limits a request
is held to, each refused with a message naming the field."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from typing import Annotated, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from incidents.models import (
    RESPONSE,
    SCHEDULE_ID,
    Instant,
    Page,
    TeamId,
    Timestamp,
    TimeZoneName,
    UserId,
    timestamp,
)
from incidents.requests import CleanName, CleanTitle
from incidents.schedules.model import Entry, Layer, LayerVersion, Restriction, RestrictionType

MAX_LAYERS = 10
MAX_LAYER_USERS = 100
MAX_RESTRICTIONS = 21
"""Restrictions of one layer: a window a day, three times over, is more than any
working-hours pattern needs."""
MIN_TURN_SECONDS = 60
MAX_TURN_SECONDS = 365 * 86_400
DAY_SECONDS = 86_400
WEEK_SECONDS = 7 * DAY_SECONDS
MAX_RENDER = timedelta(days=90)
"""A rendered range at most (PagerDuty's `/oncalls` horizon): bounded work per request."""
MAX_TEAMS = 10

ScheduleId = Annotated[str, Field(pattern=SCHEDULE_ID)]


TIME_OF_DAY = r"^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$"


def _time_of_day(value: object) -> object:
    """Exactly ``HH:mm:ss`` as PagerDuty writes it (pydantic alone would take ``9:00``)."""
    if isinstance(value, str) and not re.fullmatch(TIME_OF_DAY, value):
        raise ValueError("must be a time of day as HH:mm:ss, e.g. 09:00:00")
    return value


TimeOfDay = Annotated[
    time,
    BeforeValidator(_time_of_day),
    Field(
        description="A time of day on the schedule's wall clock, HH:mm:ss",
        json_schema_extra=lambda schema: schema.update(format="time", pattern=TIME_OF_DAY),
    ),
]


class RestrictionRequest(BaseModel):
    """A window repeated each day or each week on the schedule's wall clock, outside which
    the layer has nobody on call."""

    model_config = ConfigDict(extra="forbid")

    type: RestrictionType
    start_time_of_day: TimeOfDay
    duration_seconds: Annotated[int, Field(ge=1, le=WEEK_SECONDS)]
    start_day_of_week: Annotated[int, Field(ge=1, le=7)] | None = None
    """ISO weekday (1 = Monday) a weekly window starts on; a daily one takes none."""

    @model_validator(mode="after")
    def _fits_its_type(self) -> Self:
        if self.type is RestrictionType.DAILY:
            if self.duration_seconds > DAY_SECONDS:
                raise ValueError("a daily_restriction lasts at most 86400 seconds (a day)")
            if self.start_day_of_week is not None:
                raise ValueError("a daily_restriction takes no start_day_of_week")
        elif self.start_day_of_week is None:
            raise ValueError("a weekly_restriction needs start_day_of_week (1 = Monday to 7)")
        return self

    def restriction(self) -> Restriction:
        return Restriction(
            self.type,
            self.start_time_of_day,
            timedelta(seconds=self.duration_seconds),
            self.start_day_of_week or 1,
        )


class LayerUserRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: UserId


class ScheduleLayerRequest(BaseModel):
    """A rotation: its users take turns of `rotation_turn_length_seconds`, turn 0 from
    `rotation_virtual_start`, between `start` and `end` (none: open-ended)."""

    model_config = ConfigDict(extra="forbid")

    name: CleanName
    start: Instant
    end: Instant | None = None
    users: Annotated[list[LayerUserRequest], Field(min_length=1, max_length=MAX_LAYER_USERS)]
    rotation_virtual_start: Instant
    rotation_turn_length_seconds: Annotated[int, Field(ge=MIN_TURN_SECONDS, le=MAX_TURN_SECONDS)]
    restrictions: Annotated[list[RestrictionRequest], Field(max_length=MAX_RESTRICTIONS)] = []

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> Self:
        if self.end is not None and self.end <= self.start:
            raise ValueError("end must be after start")
        return self

    def version(self, time_zone: str, effective_from: datetime) -> LayerVersion:
        """This layer's rotation as a version of the engine's, from `effective_from`."""
        return LayerVersion(
            effective_from=effective_from,
            time_zone=time_zone,
            users=tuple(user.user_id for user in self.users),
            rotation_virtual_start=self.rotation_virtual_start,
            turn_length=timedelta(seconds=self.rotation_turn_length_seconds),
            restrictions=tuple(r.restriction() for r in self.restrictions),
        )


class ScheduleRequest(BaseModel):
    """A schedule: its layers in order, the last one highest (it wins where it has someone
    on call), all read on the wall clock of `time_zone`."""

    model_config = ConfigDict(extra="forbid")

    name: CleanName
    description: CleanTitle | None = None
    time_zone: TimeZoneName
    team_ids: Annotated[list[TeamId], Field(max_length=MAX_TEAMS)] = []
    schedule_layers: Annotated[
        list[ScheduleLayerRequest], Field(min_length=1, max_length=MAX_LAYERS)
    ]

    def layers(self) -> list[Layer]:
        """The engine's layers of a new schedule: one version each, from its start."""
        return [
            Layer(layer.start, layer.end, (layer.version(self.time_zone, layer.start),))
            for layer in self.schedule_layers
        ]


class UserReference(BaseModel):
    """A user as a rendered entry names them (PagerDuty's ``user_reference``)."""

    model_config = RESPONSE

    id: str
    type: str = "user_reference"


class RenderedEntry(BaseModel):
    """Someone on call from `start` to `end`; in the final schedule, `user` is null for a
    gap (nobody on call)."""

    model_config = RESPONSE

    start: Timestamp
    end: Timestamp
    user: UserReference | None

    @classmethod
    def of(cls, entry: Entry) -> RenderedEntry:
        user = None if entry.user_id is None else UserReference(id=entry.user_id)
        return cls(start=timestamp(entry.start), end=timestamp(entry.end), user=user)


class SubSchedule(BaseModel):
    """A rendered part of a schedule (PagerDuty's ``final_schedule`` and
    ``overrides_subschedule``)."""

    model_config = RESPONSE

    name: str
    rendered_schedule_entries: list[RenderedEntry]
    rendered_coverage_percentage: float
    """How much of the range has someone on call, in percent."""


class RenderedLayer(ScheduleLayerRequest):
    """A layer as sent, with its shifts over the rendered range."""

    model_config = RESPONSE

    rendered_schedule_entries: list[RenderedEntry]
    rendered_coverage_percentage: float


class SchedulePreview(BaseModel):
    """A schedule rendered over [since, until) without being saved (PagerDuty's
    ``POST /schedules/preview``)."""

    model_config = RESPONSE

    name: str
    description: str | None
    time_zone: str
    team_ids: list[str]
    since: Timestamp
    until: Timestamp
    schedule_layers: list[RenderedLayer]
    final_schedule: SubSchedule
    overrides_subschedule: SubSchedule


class Schedule(SchedulePreview):
    """A stored schedule rendered over [since, until): its layers as the version in force
    now defines them, their shifts and the final schedule."""

    id: str
    version: int
    """Moved by every edit and override: what a handoff was computed from."""
    created_at: Timestamp
    updated_at: Timestamp


class ScheduleSummary(BaseModel):
    """A schedule in a list."""

    model_config = RESPONSE

    id: str
    name: str
    description: str | None
    time_zone: str
    team_ids: list[str]
    version: int
    created_at: Timestamp
    updated_at: Timestamp


class ScheduleList(Page[ScheduleSummary]):
    """One page of the account's schedules, by id; pass `next_cursor` back for the next."""


class ScheduleChange(ScheduleRequest):
    """The whole schedule as it should be from `effective_at` (now when left out, never in
    the past): a layer whose rotation changes gets a version from then, a layer left out of
    the list ends then, a new one starts no earlier; who was on call before stays as it was."""

    effective_at: Instant | None = Field(
        default=None,
        description="when the change takes effect (now when left out; never in the past); "
        "it replaces the layer's edits queued after it, and a layer holds at most 5 edits "
        "waiting to take effect (409 beyond)",
    )


class OverrideRequest(BaseModel):
    """`user_id` on call from `start` to `end` in place of whoever the layers say (a start
    in the past is now)."""

    model_config = ConfigDict(extra="forbid")

    start: Instant
    end: Instant
    user_id: UserId

    @model_validator(mode="after")
    def _has_length(self) -> Self:
        if self.end <= self.start:
            raise ValueError("end must be after start (an override has a length)")
        return self


class ScheduleOverride(BaseModel):
    """An override as the API shows it (PagerDuty's)."""

    model_config = RESPONSE

    id: str
    start: Timestamp
    end: Timestamp
    user: UserReference
    created_at: Timestamp


class OverrideList(BaseModel):
    """A schedule's overrides that meet a range, by end."""

    model_config = RESPONSE

    overrides: list[ScheduleOverride]


class ScheduleReference(BaseModel):
    """A schedule as an on-call entry names it (PagerDuty's ``schedule_reference``)."""

    model_config = RESPONSE

    id: str
    summary: str = Field(description="the schedule's name")
    type: str = "schedule_reference"


class OnCall(BaseModel):
    """`user` on call for `schedule` from `start` to `end` (PagerDuty's on-call entry; an
    entry of the final schedule, so a gap is no entry)."""

    model_config = RESPONSE

    user: UserReference
    schedule: ScheduleReference
    start: Timestamp
    end: Timestamp


class OnCallList(BaseModel):
    """Who is on call: an entry per schedule and shift, by schedule then start."""

    model_config = RESPONSE

    oncalls: list[OnCall]


class CalendarFeedUrls(BaseModel):
    """A calendar feed's secret URL (PagerDuty's names): shown when it is made, never
    again; whoever has it reads the feed, until the next rotation."""

    model_config = RESPONSE

    http_cal_url: str = Field(description="the feed over https, for any calendar app")
    web_cal_url: str = Field(description="the same as webcal://, which opens a calendar app")
