"""What one page may spend: time and read units.

A fan-out page reads in waves; before each wave after the first, the engine checks the
budget, and once it is spent it returns what it has proved to be in order, ``has_more``
and a cursor that resumes exactly where the proof ends. The first wave always runs, so
every page makes progress: a page may hold fewer items than its limit, or none, while
``has_more`` is true (as DynamoDB's own Query pages do).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from dynashard.page import PageStats


@dataclass(frozen=True)
class PageBudget:
    """A deadline on `clock` (``time.monotonic`` by default) and a cap on read units; None
    for either means no limit on it."""

    deadline: float | None = None
    read_units: float | None = None
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def within(
        cls,
        seconds: float | None = None,
        read_units: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> PageBudget:
        """A budget of `seconds` from now and `read_units`."""
        deadline = None if seconds is None else clock() + seconds
        return cls(deadline, read_units, clock)

    def spent(self, stats: PageStats) -> bool:
        """Whether the page has used its time or its read units."""
        if self.read_units is not None and stats.read_units >= self.read_units:
            return True
        return self.deadline is not None and self.clock() >= self.deadline
