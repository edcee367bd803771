"""Key builders: joining, splitting, sharded keys, and every rejection naming its culprit."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dynashard import build_key, shard_keys, sharded_key
from dynashard.errors import InvalidKeyError
from dynashard.keys import PARTITION_KEY_MAX_BYTES, SORT_KEY_MAX_BYTES, split_key, split_sharded_key

COMPONENT = st.text(min_size=1, max_size=40).filter(lambda s: "#" not in s)
COMPONENTS = st.lists(COMPONENT, min_size=1, max_size=8)


def test_build_key_joins_with_separator() -> None:
    assert build_key("acct_1", "inc", "OPEN") == "acct_1#inc#OPEN"


@given(COMPONENTS)
def test_split_inverts_build(components: list[str]) -> None:
    key = build_key(*components)
    assert split_key(key) == tuple(components)


@given(COMPONENTS, COMPONENTS)
def test_different_components_never_build_the_same_key(a: list[str], b: list[str]) -> None:
    assume(a != b)
    assert build_key(*a) != build_key(*b)


@given(st.lists(COMPONENT, min_size=1, max_size=4), st.integers(0, 7), st.text(min_size=0))
def test_component_with_separator_is_rejected_and_named(
    components: list[str], position: int, text: str
) -> None:
    position %= len(components) + 1
    bad = f"{text}#x"
    components.insert(position, bad)
    with pytest.raises(InvalidKeyError, match=f"component {position} .*separator"):
        build_key(*components)


@pytest.mark.parametrize(
    ("components", "message"),
    [
        (("acct", "", "x"), r"component 1 \(''\) is empty"),
        (("acct", 7), r"component 1 \(7\) must be a str, not int"),
        ((), "at least one component"),
        (("a#b", "c"), r"component 0 \('a#b'\) contains the separator"),
    ],
)
def test_bad_components_raise_one_type(components: tuple[object, ...], message: str) -> None:
    with pytest.raises(InvalidKeyError, match=message):
        build_key(*components)  # type: ignore[arg-type]


def test_length_limits_count_utf8_bytes() -> None:
    assert build_key("é" * (SORT_KEY_MAX_BYTES // 2), kind="sort")
    with pytest.raises(
        InvalidKeyError, match=r"sort key .* is 1026 bytes UTF-8; DynamoDB allows 1024"
    ):
        build_key("é" * (SORT_KEY_MAX_BYTES // 2 + 1), kind="sort")
    assert build_key("a" * PARTITION_KEY_MAX_BYTES)
    with pytest.raises(InvalidKeyError, match=r"partition key .* allows 2048"):
        build_key("a" * PARTITION_KEY_MAX_BYTES, "b")


def test_sharded_key_and_its_inverse() -> None:
    assert sharded_key("acct#inc", 5, 8) == "acct#inc#5"
    assert split_sharded_key("acct#inc#5") == ("acct#inc", 5)
    assert shard_keys("acct#inc", 4) == ["acct#inc#0", "acct#inc#1", "acct#inc#2", "acct#inc#3"]


@given(st.lists(COMPONENT, min_size=1, max_size=4), st.integers(0, 16), st.data())
def test_sharded_key_round_trips(components: list[str], exponent: int, data: st.DataObject) -> None:
    base = build_key(*components)
    count = 2**exponent
    shard = data.draw(st.integers(0, count - 1))
    assert split_sharded_key(sharded_key(base, shard, count)) == (base, shard)


@pytest.mark.parametrize(("shard", "count"), [(8, 8), (-1, 8), (True, 8)])
def test_sharded_key_rejects_shard_out_of_range(shard: int, count: int) -> None:
    with pytest.raises(InvalidKeyError, match=r"outside 0\.\.7"):
        sharded_key("base", shard, count)


def test_sharded_key_rejects_bad_base_and_length() -> None:
    with pytest.raises(InvalidKeyError, match="is empty"):
        sharded_key("a##b", 0, 2)
    with pytest.raises(InvalidKeyError, match="allows 2048"):
        sharded_key("a" * PARTITION_KEY_MAX_BYTES, 0, 2)


@pytest.mark.parametrize("key", ["acct", "acct#x", "acct#01", "acct#-1", "acct#٣", ""])
def test_split_sharded_key_rejects_keys_without_shard(key: str) -> None:
    with pytest.raises(InvalidKeyError):
        split_sharded_key(key)


def test_shard_keys_cover_every_calculated_shard() -> None:
    keys = shard_keys("tenant#things", 16)
    assert len(set(keys)) == 16
    assert [split_sharded_key(k)[1] for k in keys] == list(range(16))


def test_the_planner_runs_from_keys_alone() -> None:
    """``python -m dynashard.keys.planner`` plans; 0.2 dropped 0.1's ``dynashard.planner``."""
    ran = subprocess.run(
        [sys.executable, "-m", "dynashard.keys.planner", "--partitions", "4"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout
    gone = subprocess.run(
        [sys.executable, "-m", "dynashard.planner"], capture_output=True, text=True, check=False
    )
    assert gone.returncode != 0
