"""Insights' quantiles by the nearest-rank definition, as people reading "p99 of 2" expect:
the smallest value with at least q of the values at or below it."""

from __future__ import annotations

import pytest

from incidents.insights.aggregates import RELATIVE_ACCURACY, Aggregate
from incidents.insights.figures import Measure


def quantiles(values: list[float], *qs: float) -> list[float | None]:
    aggregate = Aggregate()
    for value in values:
        aggregate.sketches[Measure.ACKNOWLEDGED].add(value)
    return [aggregate.quantile(Measure.ACKNOWLEDGED, q) for q in qs]


def near(value: float) -> object:
    return pytest.approx(value, rel=RELATIVE_ACCURACY)


def test_the_p90_and_p99_of_two_values_are_the_larger_and_the_p50_the_smaller() -> None:
    assert quantiles([60.0, 600.0], 0.5, 0.9, 0.99) == [near(60.0), near(600.0), near(600.0)]


def test_a_quantile_is_the_value_at_rank_q_times_n_rounded_up() -> None:
    ten = [float(n) for n in range(1, 11)]
    assert quantiles(ten, 0.5, 0.9, 0.99) == [near(5.0), near(9.0), near(10.0)]
    assert quantiles([42.0], 0.5, 0.99) == [near(42.0), near(42.0)]
    assert quantiles([], 0.9) == [None]
