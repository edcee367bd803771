"""A schedule's calendar feed, read back by the `icalendar` library as a calendar app would:
UTC times, one event per shift (none for a gap), UIDs that survive a re-render and an edit
of a shift's end, and the refresh interval subscribers read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from icalendar import Calendar

from incidents.schedules.calendar_feed import FeedShift, calendar_feed

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)


def shift(start: datetime, end: datetime, user: str | None, schedule: str = "s1") -> FeedShift:
    return FeedShift(schedule, user, start, end, str(user).title())


SHIFTS = [
    shift(NOW, NOW + timedelta(hours=8), "ada"),
    shift(NOW + timedelta(hours=8), NOW + timedelta(hours=9), None),
    shift(NOW + timedelta(hours=9), NOW + timedelta(days=1), "bob"),
]


def events(feed: bytes) -> list[dict[str, object]]:
    calendar = Calendar.from_ical(feed)
    return [
        {
            "uid": str(event["UID"]),
            "start": event.decoded("DTSTART"),
            "end": event.decoded("DTEND"),
            "summary": str(event["SUMMARY"]),
        }
        for event in calendar.walk("VEVENT")
    ]


def test_each_shift_is_an_event_in_utc_and_a_gap_is_none() -> None:
    feed = calendar_feed("sched_1", "Primary", SHIFTS, NOW)
    found = events(feed)
    assert [(e["start"], e["end"], e["summary"]) for e in found] == [
        (NOW, NOW + timedelta(hours=8), "Ada"),
        (NOW + timedelta(hours=9), NOW + timedelta(days=1), "Bob"),
    ]
    assert b"DTSTART:20261128T120000Z" in feed  # UTC, no TZID for a client to misread
    calendar = Calendar.from_ical(feed)
    assert str(calendar["X-WR-CALNAME"]) == "Primary"
    assert calendar.decoded("REFRESH-INTERVAL") == timedelta(hours=1)


def test_a_shift_keeps_its_uid_when_rendered_again_or_its_end_moves() -> None:
    first = events(calendar_feed("sched_1", "Primary", SHIFTS, NOW))
    later = NOW + timedelta(minutes=5)
    moved = [shift(SHIFTS[0].start, SHIFTS[0].end + timedelta(hours=1), "ada"), *SHIFTS[1:]]
    again = events(calendar_feed("sched_1", "Primary", moved, later))
    assert [e["uid"] for e in first] == [e["uid"] for e in again]
    assert len({e["uid"] for e in first}) == 2
    other = events(calendar_feed("sched_2", "Secondary", SHIFTS, NOW))
    assert not {e["uid"] for e in first} & {e["uid"] for e in other}


def test_shifts_of_two_schedules_at_one_time_are_two_events() -> None:
    both = [shift(NOW, NOW + timedelta(hours=8), "ada", s) for s in ("s1", "s2")]
    found = events(calendar_feed("user_1", "Ada", both, NOW))
    assert len({e["uid"] for e in found}) == 2
