"""A realistic "My Teams' Incidents" data set: what the fan-out bench measures, and what the
test of its in-process Query fake replays on DynamoDB Local.

A user in several teams; each team's incidents arrive at a log-normal rate, in bursts; a
team's partition key is sharded 1-64 ways with a doubling history (it started on one shard
and doubled as it grew, so older incidents are only in the low shards); sort keys are
time-ordered ``STATE#CreatedAt#id`` read under ``begins_with("OPEN#")``; about one
incident in seven is on two of the user's teams (a copy in each, deduplicated by id).
"""

from __future__ import annotations

import random

from dynashard import SortKeyRange

DUPLICATED = 0.15
HORIZON = 10**9
"""Time runs over [0, HORIZON): creation instants as integers, so keys sort by time."""
TEAMS_RANGE = SortKeyRange.begins_with("OPEN#")
"""What a team's list reads: its open incidents."""


def team_shards(width: int) -> list[int]:
    """Shard counts of the user's teams, adding up to `width` streams (at most 64 a team)."""
    counts: list[int] = []
    remaining = width
    while remaining:
        half = max(1, remaining // 2)
        count = min(64, 1 << (half.bit_length() - 1)) if remaining > 1 else 1
        counts.append(count)
        remaining -= count
    return counts


def teams_keys(width: int, total: int, rng: random.Random) -> list[list[str]]:
    """Sort keys per stream (teams' shards in order), `total` incidents in all."""
    shards = team_shards(width)
    offsets = [sum(shards[:n]) for n in range(len(shards))]
    rates = [rng.lognormvariate(0, 1) for _ in shards]
    growth = [sorted(rng.uniform(0.2, 0.8) * HORIZON for _ in range(count.bit_length() - 1))
              for count in shards]  # fmt: skip
    bursts = [rng.uniform(0, HORIZON) for _ in range(20)]
    keys: list[list[str]] = [[] for _ in range(width)]
    for n in range(total):
        at = _instant(rng, bursts)
        state = "OPEN" if rng.random() < 0.7 else "CLOSED"
        key = f"{state}#{at:010d}#inc_{n:06d}"
        teams = rng.choices(range(len(shards)), weights=rates, k=2)
        for team in dict.fromkeys(teams[: 2 if rng.random() < DUPLICATED else 1]):
            doublings = sum(1 for t in growth[team] if t <= at)
            shard = rng.randrange(1 << doublings)  # only the shards that existed then
            keys[offsets[team] + shard].append(key)
    return keys


def _instant(rng: random.Random, bursts: list[float]) -> int:
    """Half the incidents at any time, half in bursts around a few instants."""
    if rng.random() < 0.5:
        return int(rng.uniform(0, HORIZON))
    return int(min(HORIZON - 1, max(0.0, rng.gauss(rng.choice(bursts), HORIZON / 500))))
