"""What one page may spend: time and read units.

A fan-out page reads in waves. Before each wave the engine estimates what it can read (by
the largest item it has seen) and cuts the wave's ``Limit``s so that the page stays within
its read units; a wave that cannot fit one request a stream is not sent, and the page
returns what it has proved to be in order, ``has_more`` and a cursor that resumes where the
proof ends. The first wave always runs, cut to one read unit's worth a stream at most when
even that does not fit: every page makes progress, and a budget smaller than one read of
each stream is the page's floor, not a limit it can keep. The deadline is checked before
every wave after the first. A page may hold fewer items than its limit, or none, while
``has_more`` is true (as DynamoDB's own Query pages do).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from dynashard.query.page import PageStats


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

    def room(self, stats: PageStats) -> float | None:
        """Read units the page may still spend (None: no cap)."""
        return None if self.read_units is None else max(0.0, self.read_units - stats.read_units)

    def spent(self, stats: PageStats) -> bool:
        """Whether the page has used its time or its read units."""
        if self.read_units is not None and stats.read_units >= self.read_units:
            return True
        return self.deadline is not None and self.clock() >= self.deadline
