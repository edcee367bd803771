"""What a heartbeat is, as the API takes and shows it (Opsgenie's names, so a migrating
team's heartbeats keep their shape)."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    model_validator,
)

from incidents.alerts.models import INTEGRATION_ID
from incidents.models import RESPONSE, Page, Timestamp
from incidents.requests import AS_JSON_INTEGER, never_null

HEARTBEAT_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
HeartbeatName = Annotated[str, StringConstraints(pattern=HEARTBEAT_NAME)]
IntegrationId = Annotated[str, StringConstraints(pattern=INTEGRATION_ID)]
MAX_INTERVAL = 527_040
"""The largest interval in any unit: a leap year in minutes (the document can say a bound per
field, not per unit, and a longer check is a mistake, not a heartbeat)."""
Interval = Annotated[StrictInt, Field(ge=1, le=MAX_INTERVAL), AS_JSON_INTEGER]
"""A JSON integer: not ``"5"`` or ``true`` (which would be one minute)."""


class IntervalUnit(StrEnum):
    """The unit of a heartbeat's interval."""

    MINUTES = "minutes"
    HOURS = "hours"
    DAYS = "days"

    def of(self, interval: int) -> timedelta:
        """`interval` of this unit."""
        return timedelta(**{self.value: interval})


class HeartbeatStatus(StrEnum):
    """Where a heartbeat stands."""

    ACTIVE = "active"
    """Pinged within its interval (or created and not yet due)."""
    EXPIRED = "expired"
    """Its ping is late: it opened an incident, which the next ping resolves."""
    DISABLED = "disabled"
    """Not watched: it never expires."""


class NewHeartbeat(BaseModel):
    """A heartbeat: pinged with `integration_id`'s key at least every `interval`."""

    model_config = ConfigDict(extra="forbid")

    name: HeartbeatName
    """Unique in the account; the ping's path names it."""
    interval: Interval
    interval_unit: IntervalUnit = IntervalUnit.MINUTES
    integration_id: IntegrationId
    """Whose key pings it, and whose team its expiry incident goes to."""
    enabled: StrictBool = True


class HeartbeatChanges(BaseModel):
    """Fields of a heartbeat to change: at least one."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=never_null(at_least_one=True))

    interval: Interval | None = None
    interval_unit: IntervalUnit | None = None
    enabled: StrictBool | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> HeartbeatChanges:
        if not self.model_fields_set:
            raise ValueError("name it: at least one of interval, interval_unit, enabled")
        for name in self.model_fields_set:
            if getattr(self, name) is None:
                raise ValueError(f"{name}: a heartbeat keeps one")
        return self


class Heartbeat(BaseModel):
    """A heartbeat as the API shows it."""

    model_config = RESPONSE

    name: str
    interval: int
    interval_unit: IntervalUnit
    integration_id: str
    enabled: bool
    status: HeartbeatStatus
    created_at: Timestamp
    last_ping_at: Timestamp | None
    expires_at: Timestamp | None
    """When it expires unless pinged (null while disabled or expired)."""
    incident_id: str | None
    """The incident its last expiry opened, while expired."""

    @property
    def period(self) -> timedelta:
        """The interval as a duration."""
        return self.interval_unit.of(self.interval)


class HeartbeatList(Page[Heartbeat]):
    """One page of the account's heartbeats, by name; pass `next_cursor` back for the next."""


class Pong(BaseModel):
    """The answer to a ping (202)."""

    model_config = RESPONSE

    name: str
    status: HeartbeatStatus
    expires_at: Timestamp | None
    resolved_incident_id: str | None
    """The expiry incident this ping resolved, if it ended one."""
