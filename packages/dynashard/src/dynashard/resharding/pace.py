"""The pace of a background writer (the mover of a halving): write units a second, taken
from a bucket before each write, so the writer never takes more than its share of the
partitions it writes into, and halved whenever DynamoDB throttles it anyway.

A partition serves 1,000 write units a second; the items a halving moves land in the
tenant's own remaining shards, where its writers are writing too. A move that ran at the
speed of its client would take the partition's whole capacity (a copy and a delete per
item, a few thousand items a second), and the tenant's own writes would be throttled for
it. Throttled itself, the writer halves its rate (down to a sixteenth) and wins it back
by a twentieth of the configured rate a second (additive increase, multiplicative
decrease: TCP's answer to the same question).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dynashard.query.capacity import item_size

WRITE_UNIT_BYTES = 1024
DEFAULT_WRITE_UNITS_PER_SECOND = 100.0
"""A tenth of one partition's 1,000 write units a second: even a halving to one shard
leaves nine tenths of its partition to the tenant."""
SLOWEST_SHARE = 1 / 16
"""The lowest fraction of its configured rate a throttled writer falls to."""
BURST_SECONDS = 0.1
"""The bucket holds this many seconds' worth: in any one second the writer takes at most
1.1 times its rate (and one write more, for a write larger than the bucket)."""
RECOVERY_PER_SECOND = 1 / 20
"""A slowed rate regains this fraction of the configured rate each second."""


def write_units(item: Mapping[str, Mapping[str, Any]]) -> int:
    """Write units of one write of `item` (1 KB each, at least one), as DynamoDB bills."""
    return max(1, math.ceil(item_size(item) / WRITE_UNIT_BYTES))


@dataclass
class Pace:
    """A token bucket of write units, filled at `rate` (`BURST_SECONDS`' worth at most),
    shared by every write of one mover run."""

    units_per_second: float = DEFAULT_WRITE_UNITS_PER_SECOND
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    rate: float = field(init=False)
    """The rate now: `units_per_second`, or less after a throttle."""
    _available: float = field(init=False)
    _filled_at: float = field(init=False)

    def __post_init__(self) -> None:
        if not self.units_per_second > 0:
            raise ValueError(f"a pace needs a positive rate, got {self.units_per_second}")
        self.rate = self.units_per_second
        self._available = self._capacity()
        self._filled_at = self.clock()

    def take(self, units: int) -> None:
        """Wait until `units` write units are in the bucket, then take them. A write larger
        than the bucket waits for a full one and takes it into debt (the next write waits
        for the debt too)."""
        self._fill()
        needed = min(units, self._capacity()) - self._available
        if needed > 0:
            self.sleep(needed / self.rate)
            self._fill()
        self._available -= units

    def charge(self, units: float) -> None:
        """Take `units` more (or give them back, if negative) once a write's cost is known."""
        self._available = min(self._capacity(), self._available - units)

    def throttled(self) -> None:
        """DynamoDB refused a write for capacity: halve the rate, empty the bucket."""
        self.rate = max(self.units_per_second * SLOWEST_SHARE, self.rate / 2)
        self._available = min(self._available, 0.0)

    def _fill(self) -> None:
        now = self.clock()
        elapsed, self._filled_at = now - self._filled_at, now
        self._available = min(self._capacity(), self._available + elapsed * self.rate)
        regained = elapsed * self.units_per_second * RECOVERY_PER_SECOND
        self.rate = min(self.units_per_second, self.rate + regained)

    def _capacity(self) -> float:
        return self.rate * BURST_SECONDS
