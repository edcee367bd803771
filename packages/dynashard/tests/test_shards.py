"""Shard functions: the known vector, power-of-two validation, random and weighted shards."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynashard import calculated_shard, random_shard
from dynashard.errors import UnknownShardValueError
from dynashard.keys import MAX_SHARD_COUNT, WeightedShards, validate_shard_count

POWERS_OF_TWO = st.integers(0, 16).map(lambda e: 2**e)


def test_matches_protoc_gen_dynamo_vector() -> None:
    assert calculated_shard("user.v1.User:abc", "123", 16) == 11


@pytest.mark.parametrize(
    ("pk", "sk", "count", "expected"),
    [
        # xxh64(b"user.v1.User:abc:123") = 0x7f99762e7f9305cb; a shard is its low bits.
        ("user.v1.User:abc", "123", 1, 0),
        ("user.v1.User:abc", "123", 2, 1),
        ("user.v1.User:abc", "123", 4, 3),
        ("user.v1.User:abc", "123", 8, 3),
    ],
)
def test_smaller_counts_are_low_bits_of_the_same_hash(
    pk: str, sk: str, count: int, expected: int
) -> None:
    assert calculated_shard(pk, sk, count) == expected


def test_hash_covers_utf8_not_code_points() -> None:
    # "é" is two UTF-8 bytes; a code-point based hash would differ from Go's.
    assert calculated_shard("é", "x", 2**16) != calculated_shard("e", "x", 2**16)


@pytest.mark.parametrize("bad", [0, -1, 3, 6, 12, 2**16 + 1, 2**17, True, 2.0, "16"])
def test_shard_count_must_be_power_of_two_in_range(bad: object) -> None:
    with pytest.raises(ValueError, match="power of two from 1 to 65536"):
        validate_shard_count(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="power of two"):
        calculated_shard("a", "b", bad)  # type: ignore[arg-type]


@given(pk=st.text(min_size=1), sk=st.text(min_size=1), count=POWERS_OF_TWO)
def test_shard_is_in_range_and_nests_under_doubling(pk: str, sk: str, count: int) -> None:
    shard = calculated_shard(pk, sk, count)
    assert 0 <= shard < count
    if count < MAX_SHARD_COUNT:
        # The item's shard under 2n is either its shard under n or that plus n.
        assert calculated_shard(pk, sk, count * 2) in {shard, shard + count}


@given(seed=st.integers(0, 2**32))
def test_calculated_shards_spread_evenly(seed: int) -> None:
    rng = random.Random(seed)
    loads = Counter(calculated_shard("base", f"{rng.random()}", 16) for _ in range(4000))
    # 4000 keys over 16 shards: mean 250, sd ~15.3; 6 sd either side never fails by chance.
    assert len(loads) == 16
    assert all(160 <= n <= 340 for n in loads.values())


def test_random_shard_is_reproducible_and_covers_range() -> None:
    draws = [random_shard(8, random.Random(7)) for _ in range(3)]
    assert len(set(draws)) == 1
    rng = random.Random(1)
    assert {random_shard(8, rng) for _ in range(500)} == set(range(8))
    with pytest.raises(ValueError, match="power of two"):
        random_shard(10)


def test_weighted_shards_give_each_value_its_count() -> None:
    weighted = WeightedShards({"RESOLVED": 32, "OPEN": 8})
    assert weighted.values == ("RESOLVED", "OPEN")
    assert weighted.count_for("RESOLVED") == 32
    assert weighted.calculated_shard("OPEN", "pk", "sk") == calculated_shard("pk", "sk", 8)
    rng = random.Random(3)
    assert {weighted.random_shard("OPEN", rng) for _ in range(300)} == set(range(8))


def test_weighted_shards_reject_unknown_values() -> None:
    weighted = WeightedShards({"RESOLVED": 32, "OPEN": 8})
    with pytest.raises(UnknownShardValueError, match=r"'CLOSED'.*OPEN, RESOLVED"):
        weighted.count_for("CLOSED")


@pytest.mark.parametrize("counts", [{}, {"OPEN": 3}, {"OPEN": 0}])
def test_weighted_shards_reject_bad_configuration(counts: dict[str, int]) -> None:
    with pytest.raises(ValueError, match=r"at least one|power of two"):
        WeightedShards(counts)
