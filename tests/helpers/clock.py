"""A clock a test moves by hand: what the shard maps' caches, cursors and movers read."""

from __future__ import annotations

from datetime import datetime, timedelta

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


class WallClock:
    """A UTC instant, as the store's ``clock`` reads it, moved only by `advance`."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
