"""A schedule's shifts as an iCalendar feed (RFC 5545), built with the `icalendar` library:
times in UTC (no calendar app can then read an offset wrong), a UID per shift that stays the
same while the shift does, so a subscribed calendar updates shifts in place, and the refresh
interval that Google and Apple Calendar read."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from icalendar import Calendar, Event, vDuration

from incidents.schedules.model import Entry

REFRESH = timedelta(hours=1)
PRODUCT = "-//dynashard-incidents//on-call schedules//EN"


def shift_uid(feed_id: str, entry: Entry) -> str:
    """A shift's UID: the feed, the user and the shift's start, so an edit that moves the
    end of a shift updates that event instead of adding another."""
    digest = hashlib.sha256(f"{feed_id}\n{entry.user_id}\n{entry.start.isoformat()}".encode())
    return f"{digest.hexdigest()[:32]}@{feed_id}"


def calendar_feed(
    feed_id: str,
    name: str,
    entries: Sequence[Entry],
    summary: Callable[[Entry], str],
    now: datetime,
) -> bytes:
    """The feed `feed_id` named `name`: one event per entry (gaps are not events), titled
    by `summary` (the user's name in a schedule's feed, the schedule's in a user's)."""
    calendar = Calendar()
    calendar.add("prodid", PRODUCT)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("name", name)
    calendar.add("x-wr-calname", name)
    calendar.add("refresh-interval", vDuration(REFRESH), parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", vDuration(REFRESH))
    for entry in entries:
        if entry.user_id is None:
            continue
        event = Event()
        event.add("uid", shift_uid(feed_id, entry))
        event.add("dtstamp", now.astimezone(UTC))
        event.add("dtstart", entry.start.astimezone(UTC))
        event.add("dtend", entry.end.astimezone(UTC))
        event.add("summary", summary(entry))
        event.add("transp", "OPAQUE")
        calendar.add_component(event)
    return bytes(calendar.to_ical())
