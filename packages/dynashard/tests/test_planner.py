"""Shard planner: the exact probability against brute force, the union bound, the CLI."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from dynashard.keys import planner
from dynashard.keys.planner import (
    main,
    max_safe_load,
    overload_probability,
    partitions_for_write_rate,
    recommend_shard_count,
)


def brute_force_overload(shards: int, partitions: int, hot_share: float) -> float:
    """Enumerate every placement of the shards on the partitions."""
    limit = max_safe_load(shards, partitions, hot_share)
    placements = list(itertools.product(range(partitions), repeat=shards))
    over = sum(1 for p in placements if max(Counter(p).values()) > limit)
    return over / len(placements)


@pytest.mark.parametrize(
    ("shards", "partitions", "hot_share"),
    [(4, 4, 1.5), (8, 4, 1.5), (6, 3, 1.5), (7, 2, 1.2), (5, 5, 2.0), (9, 3, 1.34)],
)
def test_exact_probability_matches_enumeration(
    shards: int, partitions: int, hot_share: float
) -> None:
    p, method = overload_probability(shards, partitions, hot_share)
    assert method == "exact"
    assert p == pytest.approx(brute_force_overload(shards, partitions, hot_share), abs=1e-12)


def test_all_distinct_placement_closed_form() -> None:
    # 4 shards on 4 partitions stay safe only if all distinct: 4!/4^4.
    p, _ = overload_probability(4, 4, 1.5)
    assert p == pytest.approx(1 - 24 / 256)


def test_union_bound_is_an_upper_bound_close_to_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    exact, _ = overload_probability(512, 16, 1.5)
    monkeypatch.setattr(planner, "EXACT_WORK_BUDGET", 0)
    bound, method = overload_probability(512, 16, 1.5)
    assert method == "union-bound"
    assert exact <= bound <= exact * 1.5


def test_boundary_load_is_not_overload() -> None:
    # 1.5 * 64 / 4 = 24 exactly: a partition with 24 shards is at, not above, the limit.
    assert max_safe_load(64, 4, 1.5) == 24


def test_recommendation_for_four_partitions() -> None:
    plan = recommend_shard_count(4, 1.5, 0.05)
    assert plan.shard_count == 64
    assert plan.overload_probability < 0.05
    previous = [c for c in plan.candidates if c.shards < 64]
    assert all(c.overload_probability >= 0.05 for c in previous)


def test_ten_times_partitions_rule_is_not_safe_from_four_partitions() -> None:
    for partitions in (4, 8, 16, 32):
        p, _ = overload_probability(10 * partitions, partitions, 1.5)
        assert p > 0.05


def test_single_partition_never_overloads() -> None:
    assert recommend_shard_count(1).shard_count == 1


def test_partitions_from_write_rate_round_item_size_up_to_kb() -> None:
    assert partitions_for_write_rate(1000, 1024) == 1
    assert partitions_for_write_rate(1000, 1025) == 2
    assert partitions_for_write_rate(5000, 1500) == 10


@pytest.mark.parametrize(
    "kwargs",
    [{"partitions": 0}, {"partitions": 4, "hot_share": 1.0}, {"partitions": 4, "probability": 1}],
)
def test_invalid_inputs_raise(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        recommend_shard_count(**kwargs)  # type: ignore[arg-type]


def test_cli_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--partitions", "4"]) == 0
    assert "recommended shard count: 64" in capsys.readouterr().out
    assert main(["--write-rate", "5000", "--item-bytes", "1500", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["partitions"] == 10
    assert plan["shard_count"] == plan["candidates"][-1]["shards"]


def test_cli_rejects_write_rate_without_item_size(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--write-rate", "100"])
    assert exit_info.value.code == 2
    assert "--item-bytes" in capsys.readouterr().err
