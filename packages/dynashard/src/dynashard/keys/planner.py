"""Shard planner: the smallest power-of-two shard count that keeps a hot key's partitions safe.

Model (DESIGN section 4): the K shard keys of one base key carry equal traffic and land
on the N partitions independently and uniformly at random. The hottest partition is
*overloaded* when it holds more than ``X * K / N`` shards (X = hot share). The shard
loads are then multinomial(K; 1/N, ..., 1/N) and

    P(no overload) = P(max load <= m),  m = floor(X * K / N).

It is computed exactly by conditioning independent Poisson(K/N) loads on their sum
(a dynamic programme over partitions), or, when that would take too long, bounded from
above by the union bound ``N * P(Binomial(K, 1/N) > m)``. Both are computed, not guessed;
the method used is reported. Run ``python -m dynashard.keys.planner --help``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Literal

from dynashard.keys.shards import MAX_SHARD_COUNT

WCU_PER_PARTITION = 1000
WRITE_UNIT_BYTES = 1024
EXACT_WORK_BUDGET = 4_000_000
"""Largest N*K*m the exact programme may take (about a second of pure Python)."""

Method = Literal["exact", "union-bound"]


@dataclass(frozen=True)
class Candidate:
    """One evaluated shard count."""

    shards: int
    max_shards_per_partition: int
    overload_probability: float
    method: Method


@dataclass(frozen=True)
class ShardPlan:
    """The planner's answer; `shard_count` is None when no count up to 2**16 is enough."""

    partitions: int
    hot_share: float
    target_probability: float
    shard_count: int | None
    overload_probability: float
    method: Method
    candidates: list[Candidate] = field(default_factory=list)


def _validate(shards: int, partitions: int, hot_share: float) -> None:
    if shards < 1:
        raise ValueError(f"shards must be >= 1, got {shards}")
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    if not hot_share > 1:
        raise ValueError(f"hot_share must be > 1 (the fair share is 1), got {hot_share}")


def max_safe_load(shards: int, partitions: int, hot_share: float) -> int:
    """Most shards one partition may hold without exceeding `hot_share` times its fair share."""
    exact_share = Fraction(hot_share).limit_denominator(10**9)
    return math.floor(exact_share * shards / partitions)


def _log_poisson(k: int, lam: float) -> float:
    return -lam + k * math.log(lam) - math.lgamma(k + 1)


def _exact_overload(shards: int, partitions: int, limit: int) -> float:
    """1 - P(max <= limit) for multinomial loads, via Poisson conditioning."""
    lam = shards / partitions
    weights = [math.exp(_log_poisson(j, lam)) for j in range(min(limit, shards) + 1)]
    ways = [1.0] + [0.0] * shards
    for _ in range(partitions):
        ways = [
            math.fsum(ways[k - j] * weights[j] for j in range(min(k, len(weights) - 1) + 1))
            for k in range(shards + 1)
        ]
    safe = ways[shards] / math.exp(_log_poisson(shards, float(shards)))
    return min(1.0, max(0.0, 1.0 - safe))


def _binomial_tail(trials: int, p: float, above: int) -> float:
    """P(Binomial(trials, p) > above), summed in log space."""
    if above >= trials:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(trials + 1)
        - math.lgamma(j + 1)
        - math.lgamma(trials - j + 1)
        + j * log_p
        + (trials - j) * log_q
        for j in range(above + 1, trials + 1)
    ]
    return math.fsum(math.exp(t) for t in terms)


def overload_probability(
    shards: int, partitions: int, hot_share: float = 1.5
) -> tuple[float, Method]:
    """P(the hottest of `partitions` holds more than ``hot_share * shards / partitions`` shards)."""
    _validate(shards, partitions, hot_share)
    if partitions == 1:
        return 0.0, "exact"
    limit = max_safe_load(shards, partitions, hot_share)
    if partitions * (shards + 1) * (min(limit, shards) + 1) <= EXACT_WORK_BUDGET:
        return _exact_overload(shards, partitions, limit), "exact"
    bound = partitions * _binomial_tail(shards, 1 / partitions, limit)
    return min(1.0, bound), "union-bound"


def recommend_shard_count(
    partitions: int, hot_share: float = 1.5, probability: float = 0.05
) -> ShardPlan:
    """Smallest power-of-two shard count whose overload probability is below `probability`."""
    if not 0 < probability < 1:
        raise ValueError(f"probability must be between 0 and 1, got {probability}")
    candidates: list[Candidate] = []
    shards = 1
    while shards <= MAX_SHARD_COUNT:
        p, method = overload_probability(shards, partitions, hot_share)
        candidates.append(
            Candidate(shards, max_safe_load(shards, partitions, hot_share), p, method)
        )
        if p < probability:
            return ShardPlan(partitions, hot_share, probability, shards, p, method, candidates)
        shards *= 2
    last = candidates[-1]
    return ShardPlan(
        partitions, hot_share, probability, None, last.overload_probability, last.method, candidates
    )


def partitions_for_write_rate(write_rate: float, item_bytes: int) -> int:
    """Partitions a write rate needs at 1,000 WCU each (one WCU per started KB of item)."""
    if write_rate <= 0 or item_bytes <= 0:
        raise ValueError("write rate and item size must be positive")
    wcu_per_write = math.ceil(item_bytes / WRITE_UNIT_BYTES)
    return max(1, math.ceil(write_rate * wcu_per_write / WCU_PER_PARTITION))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dynashard.keys.planner",
        description="Recommend a power-of-two shard count for a hot partition key.",
    )
    load = parser.add_mutually_exclusive_group(required=True)
    load.add_argument("--partitions", type=int, help="partitions the key's traffic needs")
    load.add_argument("--write-rate", type=float, help="writes per second to the key")
    parser.add_argument("--item-bytes", type=int, help="item size (with --write-rate)")
    parser.add_argument(
        "--hot-share",
        type=float,
        default=1.5,
        help="overload above this multiple of the fair share (default 1.5)",
    )
    parser.add_argument(
        "--probability",
        type=float,
        default=0.05,
        help="acceptable probability of overload (default 0.05)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _report(plan: ShardPlan) -> str:
    lines = [
        f"partitions: {plan.partitions}; overloaded = a partition above "
        f"{plan.hot_share:g}x its fair share of shards",
        f"{'shards':>7} {'max/partition':>14} {'P(overload)':>12}  method",
    ]
    lines += [
        f"{c.shards:>7} {c.max_shards_per_partition:>14} "
        f"{c.overload_probability:>12.6f}  {c.method}"
        for c in plan.candidates
    ]
    if plan.shard_count is None:
        lines.append(
            f"no power of two up to {MAX_SHARD_COUNT} gets below {plan.target_probability:g}"
        )
    else:
        lines.append(
            f"recommended shard count: {plan.shard_count} "
            f"(P(overload) = {plan.overload_probability:.6f} < {plan.target_probability:g}, "
            f"{plan.method})"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.write_rate is not None:
            if args.item_bytes is None:
                parser.error("--write-rate needs --item-bytes")
            partitions = partitions_for_write_rate(args.write_rate, args.item_bytes)
        else:
            partitions = args.partitions
        plan = recommend_shard_count(partitions, args.hot_share, args.probability)
    except ValueError as exc:
        parser.error(str(exc))
    print(json.dumps(asdict(plan), indent=2) if args.json else _report(plan))
    return 0 if plan.shard_count is not None else 1


if __name__ == "__main__":
    sys.exit(main())
