"""Restriction windows on a version's wall clock: whether one covers an instant, and every
window that meets a range."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from incidents.schedules.model import Restriction, RestrictionType
from incidents.time_zones import instant_of, wall_clock

DAY = timedelta(days=1)
WEEK = timedelta(days=7)


def window(restriction: Restriction, day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The window of `restriction` that starts on `day` (wall clock): its edges are wall
    times, so an 8-hour window from 09:00 ends at 17:00 on a DST day too."""
    start = datetime.combine(day, restriction.start_time_of_day)
    return instant_of(start, tz), instant_of(start + restriction.duration, tz)


def starts(restriction: Restriction, first: date, last: date) -> Iterator[date]:
    """The days from `first` to `last` on which a window of `restriction` starts, with the
    windows started before `first` that may still be open on it."""
    if restriction.type is RestrictionType.DAILY:
        day, step = first - DAY, DAY
    else:
        back = (first.isoweekday() - restriction.start_day_of_week) % 7
        day, step = first - timedelta(days=back) - WEEK, WEEK
    while day <= last:
        yield day
        day += step


def covers(restrictions: Sequence[Restriction], tz: ZoneInfo, instant: datetime) -> bool:
    """Whether any window of `restrictions` covers `instant` (no restriction: always)."""
    if not restrictions:
        return True
    today = wall_clock(instant, tz).date()
    for restriction in restrictions:
        for day in starts(restriction, today, today):
            start, end = window(restriction, day, tz)
            if start <= instant < end:
                return True
    return False


def windows(
    restrictions: Sequence[Restriction], tz: ZoneInfo, since: datetime, until: datetime
) -> list[tuple[datetime, datetime]]:
    """The union of the windows that meet [since, until), clipped to it, in order (the
    whole range when there is no restriction)."""
    if not restrictions:
        return [(since, until)]
    first, last = wall_clock(since, tz).date(), wall_clock(until, tz).date()
    spans = sorted(
        (max(start, since), min(end, until))
        for restriction in restrictions
        for start, end in (window(restriction, day, tz) for day in starts(restriction, first, last))
        if start < until and end > since and start < end
    )
    merged: list[tuple[datetime, datetime]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
