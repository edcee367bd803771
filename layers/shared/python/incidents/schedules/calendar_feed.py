"""A schedule's shifts as an iCalendar feed (RFC 5545), built with the `icalendar` library:
times in UTC (no calendar app can then read an offset wrong), a UID per shift that stays the
same while the shift does, so a subscribed calendar updates shifts in place, and the refresh
interval that Google and Apple Calendar read."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from icalendar import Calendar, Event, vDuration

REFRESH = timedelta(hours=1)
PRODUCT = "-//dynashard-incidents//on-call schedules//EN"


@dataclass(frozen=True)
class FeedShift:
    """A shift as an event: someone on one schedule from `start` to `end`, with its title
    (the user's name in a schedule's feed, the schedule's in a user's)."""

    schedule_id: str
    user_id: str | None
    start: datetime
    end: datetime
    summary: str


def shift_uid(feed_id: str, shift: FeedShift) -> str:
    """A shift's UID: the feed, the schedule, the user and the shift's start, so an edit
    that moves the end of a shift updates that event instead of adding another."""
    named = f"{feed_id}\n{shift.schedule_id}\n{shift.user_id}\n{shift.start.isoformat()}"
    return f"{hashlib.sha256(named.encode()).hexdigest()[:32]}@{feed_id}"


def calendar_feed(feed_id: str, name: str, shifts: Sequence[FeedShift], now: datetime) -> bytes:
    """The feed `feed_id` named `name`: one event per shift (gaps are not events)."""
    calendar = Calendar()
    calendar.add("prodid", PRODUCT)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("name", name)
    calendar.add("x-wr-calname", name)
    calendar.add("refresh-interval", vDuration(REFRESH), parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", vDuration(REFRESH))
    for shift in shifts:
        if shift.user_id is None:
            continue
        event = Event()
        event.add("uid", shift_uid(feed_id, shift))
        event.add("dtstamp", now.astimezone(UTC))
        event.add("dtstart", shift.start.astimezone(UTC))
        event.add("dtend", shift.end.astimezone(UTC))
        event.add("summary", shift.summary)
        event.add("transp", "OPAQUE")
        calendar.add_component(event)
    return bytes(calendar.to_ical())
