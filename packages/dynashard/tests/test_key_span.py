"""Key spans: where the previous page's density says the next page ends."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dynashard.keys.key_span import KeySpan, page_span
from dynashard.query.ordered.state import separator


def test_a_step_carries_like_decimal_keys() -> None:
    """Ten items took "99978741" down to "996546930146": ten more reach about as far again,
    crossing into "98…" by borrowing, never into punctuation below "0"."""
    span = KeySpan("99978741", "996546930146#00233", 9)
    reach = span.reach("991016891197#00591", 10, descending=True)
    assert reach is not None
    assert reach.isdigit()
    assert "98" < reach < "991016891197#00591"


def test_ascending_time_keys_reach_forward() -> None:
    span = KeySpan("OPEN#2026-11-01", "OPEN#2026-11-11", 10)
    reach = span.reach("OPEN#2026-11-11", 10, descending=False)
    assert reach is not None
    assert reach.startswith("OPEN#2026-11-2")


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(st.text(min_size=1, max_size=12), min_size=3, max_size=3, unique=True),
    items=st.integers(1, 500),
    wanted=st.integers(1, 500),
    descending=st.booleans(),
)
def test_a_reach_is_strictly_after_its_origin_and_valid_utf8(
    keys: list[str], items: int, wanted: int, descending: bool
) -> None:
    start, end, after = sorted(keys, reverse=descending)
    span = page_span(start, end, items)
    reach = span.reach(after, wanted, descending=descending) if span else None
    if reach is not None:
        assert (reach < after) if descending else (reach > after)
        reach.encode()  # no surrogates: DynamoDB takes UTF-8 only


def test_a_bound_never_exceeds_dynamodbs_sort_key_size() -> None:
    """Keys of 1,020 bytes sharing all but their last characters: an estimate would need a
    longer key than DynamoDB accepts in a key condition, so there is none."""
    stem = "a" * 1018
    span = KeySpan(stem + "z9", stem + "z1", 10)
    reach = span.reach(stem + "z1", 10, descending=True)
    assert reach is None or len(reach.encode()) <= 1024


def test_no_span_without_width_or_items() -> None:
    assert page_span("a", "a", 5) is None
    assert page_span("a", "b", 0) is None
    assert KeySpan("b", "a", 5).reach("a", 0, descending=True) is None


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(st.text(min_size=1, max_size=10), min_size=3, max_size=3, unique=True),
    descending=st.booleans(),
    inclusive=st.booleans(),
)
def test_a_separator_splits_a_window_from_what_follows(
    keys: list[str], descending: bool, inclusive: bool
) -> None:
    """The window's last key is not after the separator; the next key is after it (or, for
    a horizon, not before it); and the separator is never longer than the last key."""
    last, upper, _ = sorted(keys, reverse=descending)
    cut = separator(last, upper, inclusive=inclusive, descending=descending)
    assert len(cut) <= max(len(last), len(upper))
    if descending:
        assert upper < cut <= last or (inclusive and upper <= cut <= last)
    else:
        assert last <= cut < upper or (inclusive and last <= cut <= upper)


def test_separators_are_short() -> None:
    assert separator("0123456#x", "0129999#y", inclusive=False, descending=False) == "0129"
    assert separator("0129999#y", "0123456#x", inclusive=False, descending=True) == "0129"
