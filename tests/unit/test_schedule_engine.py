"""The schedule engine: the wall-clock rule's golden cases, GoAlert-style walks every 30 s
across DST changes in four zones, and properties of any schedule (hypothesis): the range
rendering agrees with the instant answer everywhere, overrides win where they cover,
restrictions keep shifts inside their windows, and an edit at T changes nothing before T."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incidents.schedules.engine import layer_user_at, on_call_at, render
from incidents.schedules.model import (
    Layer,
    LayerVersion,
    Override,
    Restriction,
    RestrictionType,
)
from incidents.time_zones import UnknownTimeZoneError, instant_of, wall_clock, zone

ZONES = ("America/Chicago", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata")
USERS = ("ada", "bob", "cyd", "dee")
STEP = timedelta(seconds=30)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "wall", "expected"),
    [
        # Spring forward: 02:00 CST -> 03:00 CDT. 02:30 does not exist: 03:00 CDT.
        ("America/Chicago", datetime(2018, 3, 11, 2, 30), utc(2018, 3, 11, 8)),
        ("America/Chicago", datetime(2018, 3, 11, 2, 0), utc(2018, 3, 11, 8)),
        ("America/Chicago", datetime(2018, 3, 11, 3, 0), utc(2018, 3, 11, 8)),
        # Fall back: 01:30 happens twice; its first occurrence is CDT.
        ("America/Chicago", datetime(2018, 11, 4, 1, 30), utc(2018, 11, 4, 6, 30)),
        ("America/Chicago", datetime(2018, 11, 4, 2, 0), utc(2018, 11, 4, 8)),
        # Europe/London: 01:00 GMT -> 02:00 BST; 01:30 GMT/BST twice in October.
        ("Europe/London", datetime(2024, 3, 31, 1, 30), utc(2024, 3, 31, 1)),
        ("Europe/London", datetime(2024, 10, 27, 1, 30), utc(2024, 10, 27, 0, 30)),
        # Lord Howe moves half an hour: 02:00 -> 02:30 in October, 02:00 -> 01:30 in April.
        ("Australia/Lord_Howe", datetime(2024, 10, 6, 2, 15), utc(2024, 10, 5, 15, 30)),
        ("Australia/Lord_Howe", datetime(2024, 4, 7, 1, 45), utc(2024, 4, 6, 14, 45)),
        # No DST: a plain offset of +05:30.
        ("Asia/Kolkata", datetime(2024, 3, 10, 2, 30), utc(2024, 3, 9, 21)),
    ],
)
def test_a_wall_time_maps_to_one_instant_by_the_rule(
    name: str, wall: datetime, expected: datetime
) -> None:
    assert instant_of(wall, zone(name)) == expected


def test_an_unknown_zone_is_refused_naming_it() -> None:
    for name in ("Mars/Olympus_Mons", "CST+6", "america/chicago", ""):
        with pytest.raises(UnknownTimeZoneError, match=re.escape(repr(name))):
            zone(name)
    assert zone("US/Central").key == "US/Central"  # IANA links are IANA names too


def rotation(
    time_zone: str,
    start: datetime,
    turn: timedelta,
    users: tuple[str, ...] = USERS,
    restrictions: tuple[Restriction, ...] = (),
) -> Layer:
    """A layer of one version whose turn 0 starts at `start`."""
    version = LayerVersion(start, time_zone, users, start, turn, restrictions)
    return Layer(start, None, (version,))


def handoffs(layers: list[Layer], since: datetime, until: datetime) -> list[tuple[str, str]]:
    """Every change of who is on call found by asking every 30 s, as local time and user."""
    tz = zone(layers[0].versions[0].time_zone)
    found, previous, instant = [], on_call_at(layers, [], since), since
    while instant < until:
        instant += STEP
        current = on_call_at(layers, [], instant)
        if current != previous:
            found.append((instant.astimezone(tz).strftime("%m-%d %H:%M %Z"), str(current)))
            previous = current
    return found


def test_a_daily_handoff_at_a_time_the_spring_change_skips_happens_at_the_gap_s_end() -> None:
    chicago = zone("America/Chicago")
    start = instant_of(datetime(2018, 3, 9, 2, 30), chicago)
    layer = rotation("America/Chicago", start, timedelta(days=1))
    assert handoffs([layer], start, start + timedelta(days=4)) == [
        ("03-10 02:30 CST", "bob"),
        ("03-11 03:00 CDT", "cyd"),  # 02:30 CDT does not exist
        ("03-12 02:30 CDT", "dee"),
        ("03-13 02:30 CDT", "ada"),
    ]


def test_a_handoff_at_a_time_the_fall_change_repeats_happens_at_its_first_occurrence() -> None:
    chicago = zone("America/Chicago")
    start = instant_of(datetime(2018, 11, 3, 1, 30), chicago)
    layer = rotation("America/Chicago", start, timedelta(days=1), users=("ada", "bob"))
    found = handoffs([layer], start, start + timedelta(days=3))
    assert found == [("11-04 01:30 CDT", "bob"), ("11-05 01:30 CST", "ada")]
    # the shift over the change lasts 25 hours of elapsed time, on the wall clock one day
    assert instant_of(datetime(2018, 11, 5, 1, 30), chicago) - instant_of(
        datetime(2018, 11, 4, 1, 30), chicago
    ) == timedelta(hours=25)


def test_hourly_turns_stay_on_the_wall_clock_s_hours_in_london() -> None:
    london = zone("Europe/London")
    start = instant_of(datetime(2024, 3, 31, 0, 0), london)
    layer = rotation("Europe/London", start, timedelta(hours=1), users=("ada", "bob", "cyd"))
    assert handoffs([layer], start, start + timedelta(hours=3)) == [
        ("03-31 02:00 BST", "cyd"),  # bob's 01:00 GMT turn does not exist
        ("03-31 03:00 BST", "ada"),
        ("03-31 04:00 BST", "bob"),
    ]
    # bob's turn starts at the gap's end, the instant it ends (02:00 BST): it is empty
    assert layer_user_at(layer, utc(2024, 3, 31, 0, 59, 30)) == "ada"


def test_lord_howe_s_half_hour_change_moves_a_daily_handoff_only_where_it_must() -> None:
    lord_howe = zone("Australia/Lord_Howe")
    start = instant_of(datetime(2024, 10, 4, 2, 15), lord_howe)
    layer = rotation("Australia/Lord_Howe", start, timedelta(days=1), users=("ada", "bob"))
    found = handoffs([layer], start, start + timedelta(days=3))
    assert [when for when, _ in found] == [
        "10-05 02:15 +1030",
        "10-06 02:30 +11",  # 02:15 does not exist on the 6th: the gap's end
        "10-07 02:15 +11",
    ]


def test_kolkata_weekly_turns_with_a_weekday_restriction() -> None:
    kolkata = zone("Asia/Kolkata")
    start = instant_of(datetime(2024, 3, 4, 9, 0), kolkata)  # a Monday
    office = Restriction(RestrictionType.WEEKLY, time(9), timedelta(days=4, hours=8), 1)
    layer = rotation("Asia/Kolkata", start, timedelta(weeks=1), ("ada", "bob"), (office,))
    rendered = render([layer], [], start, start + timedelta(weeks=2)).layers[0]
    assert [
        (
            e.start.astimezone(kolkata).strftime("%a %H:%M"),
            e.end.astimezone(kolkata).strftime("%a %H:%M"),
            e.user_id,
        )
        for e in rendered
    ] == [("Mon 09:00", "Fri 17:00", "ada"), ("Mon 09:00", "Fri 17:00", "bob")]


# --- properties -------------------------------------------------------------------------

EPOCH = utc(2024, 3, 28)  # around Europe's spring change and Lord Howe's autumn one
TURNS = [timedelta(minutes=30), timedelta(hours=1), timedelta(hours=8), timedelta(days=1)]
MINUTES = st.integers(min_value=0, max_value=10 * 24 * 60).map(
    lambda m: EPOCH + timedelta(minutes=m)
)


@st.composite
def restrictions(draw: st.DrawFn) -> tuple[Restriction, ...]:
    out = []
    for _ in range(draw(st.integers(0, 2))):
        weekly = draw(st.booleans())
        start = time(draw(st.integers(0, 23)), draw(st.sampled_from([0, 15, 30])))
        most = 7 * 24 * 60 if weekly else 24 * 60
        kind = RestrictionType.WEEKLY if weekly else RestrictionType.DAILY
        duration = timedelta(minutes=draw(st.integers(15, most)))
        out.append(Restriction(kind, start, duration, draw(st.integers(1, 7))))
    return tuple(out)


@st.composite
def versions(draw: st.DrawFn, time_zone: str, effective_from: datetime) -> LayerVersion:
    users = tuple(draw(st.lists(st.sampled_from(USERS), min_size=1, max_size=4)))
    virtual = effective_from - timedelta(minutes=draw(st.integers(0, 3 * 24 * 60)))
    turn = draw(st.sampled_from(TURNS) | st.integers(10, 3000).map(lambda m: timedelta(minutes=m)))
    return LayerVersion(effective_from, time_zone, users, virtual, turn, draw(restrictions()))


@st.composite
def layers(draw: st.DrawFn, time_zone: str) -> Layer:
    start = draw(MINUTES)
    end = draw(st.none() | MINUTES.filter(lambda t: t > start))
    edits = sorted(draw(st.lists(MINUTES.filter(lambda t: t > start), max_size=2, unique=True)))
    found = [draw(versions(time_zone, t)) for t in [start, *edits]]
    return Layer(start, end, tuple(found))


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[Layer], list[Override]]:
    time_zone = draw(st.sampled_from(ZONES))
    found = [draw(layers(time_zone)) for _ in range(draw(st.integers(1, 3)))]
    overrides = []
    for index in range(draw(st.integers(0, 3))):
        start = draw(MINUTES)
        length = timedelta(minutes=draw(st.integers(1, 3 * 24 * 60)))
        created = EPOCH + timedelta(seconds=draw(st.integers(0, 10)))
        overrides.append(
            Override(
                f"o{index}", start, start + length, draw(st.sampled_from(USERS)), created, index
            )
        )
    return found, overrides


PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SINCE, UNTIL = EPOCH + timedelta(days=1), EPOCH + timedelta(days=5)


def samples(start: datetime, end: datetime) -> list[datetime]:
    """An entry's first and last second and its middle."""
    return [start, start + (end - start) / 2, end - timedelta(seconds=1)]


@PROPERTY
@given(schedules(), st.lists(MINUTES, max_size=20))
def test_a_rendered_range_is_what_each_of_its_instants_answers(
    schedule: tuple[list[Layer], list[Override]], instants: list[datetime]
) -> None:
    layers_, overrides = schedule
    rendered = render(layers_, overrides, SINCE, UNTIL)
    assert rendered.final[0].start == SINCE
    assert rendered.final[-1].end == UNTIL
    for previous, entry in zip(rendered.final, rendered.final[1:], strict=False):
        assert previous.end == entry.start, "the final schedule tiles the range"
        assert previous.user_id != entry.user_id, "one user's touching entries are one"
    for entry in rendered.final:
        for instant in samples(entry.start, entry.end):
            assert on_call_at(layers_, overrides, instant) == entry.user_id
    for layer, entries in zip(layers_, rendered.layers, strict=True):
        covered = [(e.start, e.end) for e in entries]
        for entry in entries:
            for instant in samples(entry.start, entry.end):
                assert layer_user_at(layer, instant) == entry.user_id
        for instant in (t for t in instants if SINCE <= t < UNTIL):
            inside = any(start <= instant < end for start, end in covered)
            assert inside == (layer_user_at(layer, instant) is not None)


@PROPERTY
@given(schedules(), MINUTES)
def test_the_latest_override_wins_wherever_it_covers(
    schedule: tuple[list[Layer], list[Override]], instant: datetime
) -> None:
    layers_, overrides = schedule
    covering = [o for o in overrides if o.start <= instant < o.end]
    if covering:
        latest = max(covering, key=lambda o: o.precedence)
        assert on_call_at(layers_, overrides, instant) == latest.user_id
    else:
        expected = next(
            (u for layer in reversed(layers_) if (u := layer_user_at(layer, instant))), None
        )
        assert on_call_at(layers_, overrides, instant) == expected


def inside_on_the_wall_clock(restriction: Restriction, wall: datetime) -> bool:
    """Whether a wall time is inside a window of `restriction`, read on the wall clock
    alone (an oracle apart from the engine's instants)."""
    step = timedelta(days=1 if restriction.type is RestrictionType.DAILY else 7)
    day = wall.date()
    if restriction.type is RestrictionType.WEEKLY:
        day -= timedelta(days=(day.isoweekday() - restriction.start_day_of_week) % 7)
    starts = [datetime.combine(day - step * back, restriction.start_time_of_day) for back in (0, 1)]
    return any(start <= wall < start + restriction.duration for start in starts)


@PROPERTY
@given(schedules())
def test_restrictions_never_let_a_shift_outside_their_windows(
    schedule: tuple[list[Layer], list[Override]],
) -> None:
    layers_, _ = schedule
    rendered = render(layers_, [], SINCE, UNTIL)
    for layer, entries in zip(layers_, rendered.layers, strict=True):
        for entry in entries:
            for instant in samples(entry.start, entry.end):
                version = max(
                    (v for v in layer.versions if v.effective_from <= instant),
                    key=lambda v: v.effective_from,
                    default=layer.versions[0],
                )
                tz = zone(version.time_zone)
                wall = wall_clock(instant, tz)
                twice = wall.replace(tzinfo=tz, fold=1).astimezone(UTC) != instant_of(wall, tz)
                if version.restrictions and not twice:  # the repeated hour reads two ways
                    assert any(inside_on_the_wall_clock(r, wall) for r in version.restrictions)


@PROPERTY
@given(schedules(), MINUTES, st.data())
def test_an_edit_at_t_changes_nothing_before_t(
    schedule: tuple[list[Layer], list[Override]], edit_at: datetime, data: st.DataObject
) -> None:
    layers_, overrides = schedule
    index = data.draw(st.integers(0, len(layers_) - 1))
    layer = layers_[index]
    edit_at = max(edit_at, layer.versions[-1].effective_from + timedelta(minutes=1))
    time_zone = layer.versions[0].time_zone
    new = data.draw(versions(time_zone, edit_at))
    edited = [
        *layers_[:index],
        replace(layer, versions=(*layer.versions, new)),
        *layers_[index + 1 :],
    ]
    since = min(SINCE, edit_at - timedelta(days=1))
    until = min(edit_at, UNTIL)
    assert render(edited, overrides, since, until) == render(layers_, overrides, since, until)
    for instant in data.draw(st.lists(MINUTES.filter(lambda t: t < edit_at), max_size=10)):
        assert on_call_at(edited, overrides, instant) == on_call_at(layers_, overrides, instant)
