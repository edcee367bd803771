"""A clock a test moves by hand: what the shard maps' caches, cursors and movers read."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from incidents.store import Caller, Store, new_id
from incidents.timers.firing import Fire, FireHere
from incidents.timers.schedule import TimerKind
from incidents.timers.sweep import SweepReport, sweep

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


def new_owner() -> Caller:
    """A person in a new account."""
    return Caller(new_id("acct"), new_id("user"))


@dataclass(kw_only=True)
class ClockedAccount:
    """An account's owner on a store whose clock reads `now`, which the test moves: what
    the on-call tests (heartbeats, maintenance windows, timers) stand on."""

    store: Store
    now: datetime
    owner: Caller = field(default_factory=new_owner)

    def __post_init__(self) -> None:
        self.store.clock = lambda: self.now

    def at(self, moment: datetime) -> None:
        self.now = moment

    def sweep_at(
        self,
        moment: datetime,
        handlers: Mapping[TimerKind, Fire],
        *,
        deadline: Callable[[], bool] = lambda: False,
    ) -> SweepReport:
        """The timers' sweep at `moment`, the clock moved there first."""
        self.at(moment)
        return sweep(self.store, moment, FireHere(handlers), deadline=deadline)
