"""A clock a test moves by hand: what the shard maps' caches, cursors and movers read."""

from __future__ import annotations

START = 1_800_000_000.0
"""Epoch seconds a clock starts at (2027-01-15), after anything the real clock stamped."""


class ManualClock:
    """Epoch seconds, moved only by `advance`."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
