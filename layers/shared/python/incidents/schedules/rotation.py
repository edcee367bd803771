"""A version's turns: turn k starts at the virtual start plus k turn lengths on the wall
clock (so a weekly Monday 09:00 handoff stays Monday 09:00 local), mapped to an instant by
the zone rule; its user is the k-th in rotation order, cycling."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from zoneinfo import ZoneInfo

from incidents.schedules.model import LayerVersion
from incidents.time_zones import instant_of, wall_clock, zone


def anchor(version: LayerVersion) -> tuple[ZoneInfo, datetime]:
    """The version's zone and its turn 0 on that zone's wall clock."""
    tz = zone(version.time_zone)
    return tz, wall_clock(version.rotation_virtual_start, tz)


def boundary(version: LayerVersion, turn: int) -> datetime:
    """The instant turn `turn` starts (and turn `turn - 1` ends)."""
    tz, start = anchor(version)
    return instant_of(start + turn * version.turn_length, tz)


def turn_at(version: LayerVersion, instant: datetime) -> int:
    """The turn under way at `instant`: the wall-clock guess, moved to the turn whose
    boundaries hold it (boundaries never go back, and a turn the zone's gap swallows has
    none of its own)."""
    tz, start = anchor(version)
    turn = (wall_clock(instant, tz) - start) // version.turn_length
    while boundary(version, turn) > instant:
        turn -= 1
    while boundary(version, turn + 1) <= instant:
        turn += 1
    return turn


def user_of(version: LayerVersion, turn: int) -> str:
    return version.users[turn % len(version.users)]


def turns(
    version: LayerVersion, since: datetime, until: datetime
) -> Iterator[tuple[int, datetime, datetime]]:
    """Each turn that meets [since, until) with its bounds clipped to it, skipping turns of
    no length."""
    turn = turn_at(version, since)
    start = boundary(version, turn)
    while start < until:
        end = boundary(version, turn + 1)
        if end > since and end > start:
            yield turn, max(start, since), min(end, until)
        turn, start = turn + 1, end
