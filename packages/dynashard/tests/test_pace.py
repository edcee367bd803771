"""The mover's pace (`dynashard.resharding.pace`) on a simulated clock: what it lets through in any
second, how a throttle slows it and how it recovers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dynashard.resharding import Pace
from dynashard.resharding.pace import BURST_SECONDS, SLOWEST_SHARE


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@given(
    rate=st.integers(5, 500),
    writes=st.lists(st.integers(1, 8), min_size=1, max_size=300),
    gaps=st.lists(st.floats(0, 0.5), min_size=1, max_size=300),
)
def test_no_second_takes_more_than_its_rate_and_a_burst(
    rate: int, writes: list[int], gaps: list[float]
) -> None:
    clock = Clock()
    pace = Pace(rate, clock=clock, sleep=clock.sleep)
    taken: list[tuple[float, int]] = []
    for units, gap in zip(writes, gaps * (len(writes) // len(gaps) + 1), strict=False):
        clock.sleep(gap)  # the write's own time
        pace.take(units)
        taken.append((clock.now, units))
    for start, _ in taken:
        window = sum(units for at, units in taken if start <= at < start + 1)
        assert window <= rate * (1 + BURST_SECONDS) + max(writes)


def test_a_throttle_halves_the_rate_and_quiet_seconds_win_it_back() -> None:
    clock = Clock()
    pace = Pace(100, clock=clock, sleep=clock.sleep)
    pace.throttled()
    assert pace.rate == 50
    for _ in range(10):
        pace.throttled()
    assert pace.rate == 100 * SLOWEST_SHARE, "never below a sixteenth"
    clock.sleep(10)
    pace.take(1)
    regained = 100 * SLOWEST_SHARE + 100 * 10 / 20  # a twentieth a second, for 10 s
    assert regained <= pace.rate < regained + 1, "and the wait for its bucket"
    clock.sleep(60)
    pace.take(1)
    assert pace.rate == 100, "back to its configured rate, not above"


def test_a_write_s_real_cost_is_charged_after_it() -> None:
    clock = Clock()
    pace = Pace(10, clock=clock, sleep=clock.sleep)
    pace.take(1)
    pace.charge(5)  # it cost 6 units, indexes included
    before = clock.now
    pace.take(1)
    assert clock.now - before >= 0.5, "the next write waits for the debt"
