"""What a schedule is made of, in PagerDuty's terms: layers of rotations clipped by
restrictions, each layer a list of versions (an edit is a new version from the time it
takes effect, so no edit rewrites who was on call before it), and overrides.

Instants are aware UTC datetimes; times of day and anchors are read on the wall clock of the
version's time zone (`incidents.time_zones`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from enum import StrEnum


class RestrictionType(StrEnum):
    DAILY = "daily_restriction"
    WEEKLY = "weekly_restriction"


@dataclass(frozen=True)
class Restriction:
    """A window, repeated each day or each week, outside which the layer has nobody on
    call (the turn's user is on call only inside it)."""

    type: RestrictionType
    start_time_of_day: time
    duration: timedelta
    start_day_of_week: int = 1
    """ISO weekday of a weekly window's start, 1 (Monday) to 7 (Sunday)."""


@dataclass(frozen=True)
class LayerVersion:
    """A layer's rotation from `effective_from` until the next version takes over."""

    effective_from: datetime
    time_zone: str
    users: tuple[str, ...]
    """In rotation order: turn k is `users[k % len(users)]`."""
    rotation_virtual_start: datetime
    """Where turn 0 starts (read on the zone's wall clock); may precede the layer."""
    turn_length: timedelta
    restrictions: tuple[Restriction, ...] = ()


@dataclass(frozen=True)
class Layer:
    """A layer's span and its versions, each taking effect after the one before it (the
    first rules from `start`)."""

    start: datetime
    end: datetime | None
    versions: tuple[LayerVersion, ...]


@dataclass(frozen=True)
class Override:
    """`user_id` on call from `start` to `end` in place of whoever the layers say; of two
    that cover an instant, the one created later wins (`precedence`)."""

    id: str
    start: datetime
    end: datetime
    user_id: str
    created: datetime
    sequence: int = 0
    """The schedule's version its creation made: orders overrides created in one instant."""

    @property
    def precedence(self) -> tuple[datetime, int, str]:
        """What "created later" compares."""
        return self.created, self.sequence, self.id


@dataclass(frozen=True)
class Entry:
    """Someone (or, in the final schedule, nobody: a gap) on call from `start` to `end`."""

    start: datetime
    end: datetime
    user_id: str | None
