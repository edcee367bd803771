"""Every instant the document accepts for ``since`` / ``until`` either becomes the right
sort-key bound or is a 400 naming the parameter: over the whole range of datetimes and
offsets, the bound compares with every stored creation time as the real instants do."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from incidents.errors import InvalidFilterError
from incidents.models import RFC3339, timestamp
from lambdas.http.params import parse_instant

MICROSECOND = timedelta(microseconds=1)
OFFSETS = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1)
"""Offsets in minutes Python takes (strictly less than a day either way)."""


def rfc3339(moment: datetime, offset_minutes: int) -> str:
    """`moment` (naive, a wall-clock time) written with that offset, as clients send it."""
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S.%f}{sign}{hours:02d}:{minutes:02d}"


def microseconds(moment: datetime) -> int:
    """Microseconds since 0001-01-01T00:00 of a naive time (no overflow: plain integers)."""
    return (moment - datetime.min) // MICROSECOND


@given(
    wall=st.datetimes(),
    offset=OFFSETS,
    stored=st.datetimes(max_value=datetime.max - MICROSECOND),
)
def test_a_bound_orders_stored_times_as_the_real_instants(
    wall: datetime, offset: int, stored: datetime
) -> None:
    text = rfc3339(wall, offset)
    assert re.fullmatch(RFC3339, text)
    bound = parse_instant(text, "since")
    assert bound is not None
    real = microseconds(wall) - offset * 60 * 1_000_000
    at = timestamp(stored.replace(tzinfo=UTC))
    assert (at >= timestamp(bound)) == (microseconds(stored) >= real), (text, at)


@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(1, 1, 1, 23)), OFFSETS)
def test_instants_near_the_ends_of_the_calendar_never_fail(wall: datetime, offset: int) -> None:
    for moment in (wall, wall.replace(year=9999, month=12, day=31)):
        assert parse_instant(rfc3339(moment, offset), "until") is not None


def test_years_before_1000_sort_before_later_ones() -> None:
    assert timestamp(datetime(999, 1, 1, tzinfo=UTC)) == "0999-01-01T00:00:00.000000Z"
    assert timestamp(datetime(999, 1, 1, tzinfo=UTC)) < timestamp(datetime(2026, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize("text", ["2026-02-30T00:00:00Z", "2026-01-01T00:00:00+24:00"])
def test_a_date_that_does_not_exist_is_refused_naming_the_parameter(text: str) -> None:
    with pytest.raises(InvalidFilterError, match=r"^until: "):
        parse_instant(text, "until")
