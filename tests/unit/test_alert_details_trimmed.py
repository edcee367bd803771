"""An alert's details trimmed to what an incident keeps: never above the budget, whole
entries first, a marker that says what was cut."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from incidents.alerts.trimmed import MARKER, MARKER_BYTES, NAMED_KEYS, size_of, trimmed

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3000),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@given(details=st.dictionaries(st.text(max_size=200), VALUES, max_size=40),
       budget=st.integers(MARKER_BYTES + 64, 20_000))  # fmt: skip
def test_trimmed_details_stay_within_the_budget(details: dict[str, Any], budget: int) -> None:
    kept = trimmed(details, budget)
    assert size_of(kept) <= budget
    if size_of(details) <= budget:
        assert kept == details, "what fits is unchanged"
    else:
        marker = kept[MARKER]
        assert marker["sent_bytes"] == size_of(details)
        whole = [name for name in details if name in kept and kept[name] == details[name]]
        assert whole == list(details)[: len(whole)], "whole entries first, in order"


def test_a_string_is_cut_to_its_head_and_the_rest_is_named() -> None:
    details = {"a": "x" * 10, "log": "y" * 9000, **{f"k{n}": n for n in range(30)}}
    kept = trimmed(details, 8000)
    assert kept["a"] == "x" * 10
    assert kept["log"].startswith("yyy")
    assert kept["log"].endswith("…")
    marker = kept[MARKER]
    assert marker["cut_or_dropped"] == ["log", *[f"k{n}" for n in range(NAMED_KEYS - 1)]]
    assert marker["more_dropped"] == 31 - NAMED_KEYS
