"""A hot base key under more writes than one partition takes: none, fixed and dynamic shards.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.hot_key``).
Deterministic (seeded) discrete-event simulation; the baseline is the unsharded key in the
same run. Model (stated again in the README next to the figures):

- the table has ``PARTITIONS`` physical partitions, each a token bucket of 1,000 WCU/s
  holding at most one second of tokens (no burst or adaptive capacity credit);
- a shard key lands on partition ``xxh64(key) % PARTITIONS`` (uniform hashing, as DynamoDB);
- writes of ``ITEM_BYTES`` arrive evenly at ``WRITE_RATE``/s, each on a uniformly random
  calculated shard of the current count; a throttled write is counted as rejected, not
  retried (throughput admitted is what the figures compare);
- dynamic growth follows `dynashard.ShardCounts`: a throttled write starts a growth after a
  random jitter unless one is pending, the cooldown since the last one has not passed, or
  the count is at its maximum; the new count applies to every writer at once.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import xxhash

from bench.support.report import recording_tables, save
from dynashard import GrowthPolicy, ShardMetaKey, sharded_key
from dynashard.keys.planner import WCU_PER_PARTITION, WRITE_UNIT_BYTES, recommend_shard_count
from dynashard.resharding import ShardMeta

PARTITIONS = 8
WRITE_RATE = 4000
ITEM_BYTES = 1000
SECONDS = 240
SEED = 20261123
KEY = ShardMetaKey.for_tenant("tenant", "tenant#hot")
WINDOWS = (10, 30, 60, 90, 120, 150, 180, 240)
START = 1_800_000_000.0
"""Simulated epoch seconds at t = 0: a key without metadata last grew at 0, long ago."""


@dataclass(frozen=True)
class Scenario:
    """A starting count and, for dynamic sharding, the growth policy."""

    name: str
    count: int
    policy: GrowthPolicy | None = None


class TokenBucket:
    """One partition: `rate` WCU/s, holding at most one second of tokens."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.tokens = rate
        self.at = START

    def take(self, now: float, units: float) -> bool:
        """Spend `units` at `now` if the bucket holds them."""
        self.tokens = min(self.rate, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < units:
            return False
        self.tokens -= units
        return True


def partition_of(shard: int) -> int:
    """Physical partition of one shard key (its text does not depend on the count)."""
    return xxhash.xxh64_intdigest(sharded_key(KEY.base, shard, 2**16).encode()) % PARTITIONS


def simulate(scenario: Scenario) -> tuple[list[float], list[tuple[float, int]]]:
    """Admitted WCU in each second, and the (time, count) history."""
    rng = random.Random(SEED)
    buckets = [TokenBucket(WCU_PER_PARTITION) for _ in range(PARTITIONS)]
    placement: dict[int, int] = {}
    wcu = math.ceil(ITEM_BYTES / WRITE_UNIT_BYTES)
    meta = ShardMeta.initial(KEY, scenario.count)
    policy = scenario.policy
    growth_at: float | None = None
    admitted = [0.0] * SECONDS
    for n in range(WRITE_RATE * SECONDS):
        now = START + n / WRITE_RATE
        if growth_at is not None and now >= growth_at:
            meta, growth_at = meta.doubled(int(growth_at * 1000)), None
        shard = rng.getrandbits(64) & (meta.shard_count - 1)
        partition = placement.get(shard)
        if partition is None:
            partition = placement[shard] = partition_of(shard)
        if buckets[partition].take(now, wcu):
            admitted[int(now - START)] += wcu
        elif growth_at is None and policy and policy.allows_growth(meta, now):
            growth_at = now + rng.uniform(0, policy.max_jitter_seconds)
    history = [(max(0.0, entry.at / 1000 - START), entry.count) for entry in meta.history]
    return admitted, history


def steady(admitted: list[float]) -> float:
    """Mean admitted WCU/s over the last minute."""
    return sum(admitted[-60:]) / 60


def time_to_reach(admitted: list[float], level: float) -> int | None:
    """First second from which every later second admits at least `level` WCU."""
    for second in range(len(admitted)):
        if all(value >= level for value in admitted[second:]):
            return second
    return None


def window_means(admitted: list[float]) -> list[float]:
    """Mean admitted WCU/s over each window ending at `WINDOWS` (from the previous end)."""
    starts = (0, *WINDOWS[:-1])
    return [sum(admitted[a:b]) / (b - a) for a, b in zip(starts, WINDOWS, strict=True)]


def main() -> None:
    offered = WRITE_RATE * math.ceil(ITEM_BYTES / WRITE_UNIT_BYTES)
    planned = recommend_shard_count(PARTITIONS).shard_count or 2**16
    scenarios = [
        Scenario("no sharding (baseline)", 1),
        Scenario(f"fixed {planned} (planner)", planned),
        Scenario("dynamic from 1, cooldown 30 s", 1, GrowthPolicy(cooldown_seconds=30)),
        Scenario("dynamic from 1, cooldown 5 s", 1, GrowthPolicy(cooldown_seconds=5)),
    ]
    runs = {s.name: simulate(s) for s in scenarios}
    baseline = steady(runs[scenarios[0].name][0])
    target = 0.9 * steady(runs[scenarios[1].name][0])
    print(
        f"offered {offered:,} WCU/s on one base key; {PARTITIONS} partitions of "
        f"{WCU_PER_PARTITION:,} WCU/s; {SECONDS} s; seed {SEED}"
    )
    header = " | ".join(f"{a}-{b} s" for a, b in zip((0, *WINDOWS[:-1]), WINDOWS, strict=True))
    print(f"| scenario | {header} | steady | vs baseline | reaches 90% of fixed | counts |")
    print("|---|" + "---:|" * (len(WINDOWS) + 3) + "---|")
    results = {}
    for name, (admitted, history) in runs.items():
        reached = time_to_reach(admitted, target)
        counts = " -> ".join(f"{count}@{at:.0f}s" for at, count in history)
        cells = " | ".join(f"{value:,.0f}" for value in window_means(admitted))
        print(
            f"| {name} | {cells} | {steady(admitted):,.0f} | "
            f"{steady(admitted) / baseline:.2f}x | "
            f"{'never' if reached is None else f'{reached} s'} | {counts} |"
        )
        results[name] = {
            "admitted_wcu_per_second": admitted,
            "steady_wcu": steady(admitted),
            "seconds_to_90_percent_of_fixed": reached,
            "history": history,
        }
    save("hot_key", {"offered_wcu": offered, "partitions": PARTITIONS, "scenarios": results})


if __name__ == "__main__":
    with recording_tables():
        main()
