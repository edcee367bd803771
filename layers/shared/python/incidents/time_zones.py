"""Time zones from the pinned `tzdata` package, and the one rule that maps a wall-clock
time to an instant: every schedule boundary (a handoff, a restriction's edge) is a time on
the schedule's wall clock, so a daily 09:00 handoff stays at 09:00 across DST changes.

The rule, as GoAlert's `util/timeutil` has it: a wall-clock time that does not exist (skipped
when clocks spring forward, 02:30 in America/Chicago on 2018-03-11) is the first instant
after the gap (03:00 CDT); a time that happens twice (when clocks fall back) is its first
occurrence. `dateutil.rrule` would put the first at 03:30: no library decides it here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from importlib import resources
from zoneinfo import ZoneInfo


class UnknownTimeZoneError(ValueError):
    """A time zone that is not an IANA name in the pinned tzdata."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"unknown time zone {name!r}: expected an IANA time zone name such as "
            "'America/Chicago' or 'Europe/London'"
        )
        self.name = name


@cache
def zone_names() -> frozenset[str]:
    """Every IANA name the pinned tzdata holds (links such as ``US/Central`` included)."""
    return frozenset(resources.files("tzdata").joinpath("zones").read_text().split())


@cache
def zone(name: str) -> ZoneInfo:
    """The zone `name` from the pinned tzdata, never the host's: the same answers on a
    laptop and in Lambda, whatever tz database either has."""
    if name not in zone_names():
        raise UnknownTimeZoneError(name)
    with resources.files("tzdata.zoneinfo").joinpath(*name.split("/")).open("rb") as data:
        return ZoneInfo.from_file(data, key=name)


def wall_clock(instant: datetime, tz: ZoneInfo) -> datetime:
    """What a clock on the wall in `tz` reads at `instant` (naive)."""
    return instant.astimezone(tz).replace(tzinfo=None)


def instant_of(wall: datetime, tz: ZoneInfo) -> datetime:
    """The UTC instant of the naive wall-clock time `wall` in `tz`, by the rule above."""
    first = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)
    if wall_clock(first, tz) == wall:
        return first  # it exists; fold 0 is its first occurrence if it happens twice
    # In a gap, fold 0 reads `wall` with the offset before it and fold 1 with the offset
    # after: the transition lies between the two, at a whole second.
    after = int(wall.replace(tzinfo=tz, fold=1).astimezone(UTC).timestamp())
    low, high = sorted((after, int(first.timestamp()) + 1))
    while low < high:
        middle = (low + high) // 2
        if wall_clock(datetime.fromtimestamp(middle, UTC), tz) >= wall:
            high = middle
        else:
            low = middle + 1
    return datetime.fromtimestamp(low, UTC)
