"""Sort-key ranges: one DynamoDB condition, narrowed by cursors, exact on the client."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynashard import SortKeyRange
from dynashard.query.sort_range import Bound, prefix_successor

KEYS = st.text(alphabet="AB#é\U0010ffff", min_size=1, max_size=6)


def test_prefix_successor() -> None:
    assert prefix_successor("OPEN#") == "OPEN$"
    assert prefix_successor("a\U0010ffff") == "b"
    assert prefix_successor("\U0010ffff") is None
    assert prefix_successor("\ud7ff") == "\ue000"  # skips the surrogate block


@given(prefix=KEYS, key=KEYS)
def test_begins_with_bounds_are_exact(prefix: str, key: str) -> None:
    assert SortKeyRange.begins_with(prefix).contains(key) == key.startswith(prefix)


@pytest.mark.parametrize(
    ("sort_range", "condition", "values"),
    [
        (SortKeyRange(), None, {}),
        (SortKeyRange.begins_with("OPEN#"), "begins_with(#sk, :vlo)", {":vlo": "OPEN#"}),
        (SortKeyRange.equal_to("x"), "#sk = :vlo", {":vlo": "x"}),
        (SortKeyRange.between("a", "b"), "#sk BETWEEN :vlo AND :vhi", {":vlo": "a", ":vhi": "b"}),
        (SortKeyRange.greater_than("a"), "#sk > :vlo", {":vlo": "a"}),
        (SortKeyRange.greater_than("a", inclusive=True), "#sk >= :vlo", {":vlo": "a"}),
        (SortKeyRange.less_than("a"), "#sk < :vhi", {":vhi": "a"}),
        (SortKeyRange.less_than("a", inclusive=True), "#sk <= :vhi", {":vhi": "a"}),
    ],
)
def test_key_condition_rendering(
    sort_range: SortKeyRange, condition: str | None, values: dict[str, str]
) -> None:
    assert sort_range.key_condition("#sk", ":v") == (condition, values)


def test_cursor_inside_begins_with_becomes_between_with_client_side_end() -> None:
    narrowed = SortKeyRange.begins_with("OPEN#").after("OPEN#5", descending=True)
    assert narrowed.key_condition("#sk", ":v") == (
        "#sk BETWEEN :vlo AND :vhi",
        {":vlo": "OPEN#", ":vhi": "OPEN#5"},
    )
    assert not narrowed.contains("OPEN#5"), "the cursor item itself is dropped on the client"
    assert narrowed.contains("OPEN#4")
    assert not narrowed.contains("OPENED")


def test_after_keeps_the_tighter_bound() -> None:
    base = SortKeyRange.greater_than("m")
    assert base.after("c", descending=False) == base
    assert base.after("x", descending=False).lower == Bound("x", False)


@given(low=KEYS, high=KEYS, position=KEYS, key=KEYS, descending=st.booleans())
def test_after_is_intersection_with_strictly_after(
    low: str, high: str, position: str, key: str, descending: bool
) -> None:
    base = SortKeyRange.between(low, high)
    narrowed = base.after(position, descending)
    strictly_after = key < position if descending else key > position
    assert narrowed.contains(key) == (base.contains(key) and strictly_after)
    if narrowed.is_empty():
        assert not any(narrowed.contains(k) for k in (low, high, key, position))


def test_empty_ranges() -> None:
    assert SortKeyRange.between("b", "a").is_empty()
    assert SortKeyRange.equal_to("a").after("a", descending=False).is_empty()
    assert not SortKeyRange.equal_to("a").is_empty()
