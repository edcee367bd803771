"""Shard functions: which shard an item lives on.

Calculated shards are reproducible from the item's own keys, so a point read touches
exactly one partition key; random shards spread writes when no stable key exists;
weighted shards give hot values of a low-cardinality attribute more shards than rare ones.
Shard counts are powers of two so that doubling a count nests the shard sets
(an item at ``h & (n-1)`` is one of the candidates ``h & (2n-1)``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

import xxhash

from dynashard.errors import UnknownShardValueError

MAX_SHARD_COUNT = 2**16


def validate_shard_count(shard_count: int) -> int:
    """Return `shard_count` if it is a power of two in [1, 2**16], else raise ValueError."""
    if (
        isinstance(shard_count, bool)
        or not isinstance(shard_count, int)
        or shard_count < 1
        or shard_count > MAX_SHARD_COUNT
        or shard_count & (shard_count - 1)
    ):
        raise ValueError(
            f"shard_count must be a power of two from 1 to {MAX_SHARD_COUNT}, got {shard_count!r}"
        )
    return shard_count


def calculated_shard(pk: str, sk: str, shard_count: int) -> int:
    """Shard of an item: ``xxh64("<pk>:<sk>") & (shard_count - 1)``.

    Bit-compatible with ConductorOne's protoc-gen-dynamo (Go ``xxhash.Sum64String``,
    seed 0, UTF-8), so services written with either agree on every shard.
    """
    validate_shard_count(shard_count)
    digest = xxhash.xxh64_intdigest(f"{pk}:{sk}".encode())
    return digest & (shard_count - 1)


def random_shard(shard_count: int, rng: random.Random | None = None) -> int:
    """A uniformly random shard in ``range(shard_count)``; pass `rng` for reproducibility."""
    validate_shard_count(shard_count)
    return (rng or random).randrange(shard_count)


class WeightedShards:
    """Shard counts per value of a low-cardinality attribute, e.g. ``{"OPEN": 8, "CLOSED": 32}``.

    A value missing from the configuration raises `UnknownShardValueError`: defaulting
    silently would write items to keys no reader ever queries.
    """

    def __init__(self, counts: Mapping[str, int]) -> None:
        if not counts:
            raise ValueError("weighted shards need at least one value")
        for value, count in counts.items():
            try:
                validate_shard_count(count)
            except ValueError as exc:
                raise ValueError(f"shard count for {value!r}: {exc}") from None
        self._counts = dict(counts)

    @property
    def values(self) -> tuple[str, ...]:
        """The configured values, in configuration order."""
        return tuple(self._counts)

    def count_for(self, value: str) -> int:
        """Shard count configured for `value`."""
        try:
            return self._counts[value]
        except KeyError:
            known = ", ".join(sorted(self._counts))
            raise UnknownShardValueError(
                f"no shard count configured for {value!r} (configured: {known})"
            ) from None

    def calculated_shard(self, value: str, pk: str, sk: str) -> int:
        """Calculated shard of an item whose sharded attribute has `value`."""
        return calculated_shard(pk, sk, self.count_for(value))

    def random_shard(self, value: str, rng: random.Random | None = None) -> int:
        """Random shard for a write whose sharded attribute has `value`."""
        return random_shard(self.count_for(value), rng)
