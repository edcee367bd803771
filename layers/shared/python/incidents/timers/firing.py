"""Firing due timers: each through its kind's handler, in one transaction with its claim, so
a timer moved since it was listed, or fired already, is left alone (its claim fails).

`fire_timer` fires one, wherever it runs: in the worker that takes the firing queue's
messages (the cloud) or in `FireHere`, which fires a sweep's timers in its own process, a
few at once (tests, benchmarks and ``make dev`` without a queue).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextvars import copy_context
from dataclasses import dataclass, field
from enum import Enum

from dynashard.query import Item
from incidents.store import Store
from incidents.table import GSI3
from incidents.timers.schedule import Timer, TimerKind, timer_from_item

logger = logging.getLogger(__name__)

WORKERS = 8
"""Timers `FireHere` fires at once: each firing is a few round trips of its own (a read, a
transaction), so a run fires several in the time of one."""

Fire = Callable[[Store, Timer], bool]
"""What firing a timer does, in one transaction with its claim; False when the claim
failed (the timer was moved or fired meanwhile)."""


class Outcome(Enum):
    """What firing one timer did."""

    FIRED = "fired"
    LOST = "lost"
    FAILED = "failed"


@dataclass
class FiringReport:
    """Timers fired, claims lost, firings failed (left due, tried again), how late each
    fired timer was (seconds), and timers handed to the firing queue (fired later, by its
    workers)."""

    fired: int = 0
    lost: int = 0
    failed: int = 0
    late_seconds: list[float] = field(default_factory=list)
    queued: int = 0

    def count(self, outcome: Outcome, late: float) -> None:
        """Add one firing."""
        if outcome is Outcome.FIRED:
            self.fired += 1
            self.late_seconds.append(late)
        elif outcome is Outcome.LOST:
            self.lost += 1
        else:
            self.failed += 1


def fire_timer(
    store: Store, handlers: Mapping[TimerKind, Fire], timer: Timer
) -> tuple[Outcome, float]:
    """Fire `timer` and how late it fired (seconds, by the store's clock when it fired)."""
    if not handlers[timer.kind](store, timer):
        return Outcome.LOST, 0.0
    return Outcome.FIRED, (store.clock() - timer.due_at).total_seconds()


def subject_of(item: Item) -> str:
    """What a listed timer is about, across accounts (an unreadable item: its own key): one
    subject's timers fire one after another (an incident's auto-resolve and acknowledgement
    timeout would race)."""
    account, subject = (item.get(name, {}).get("S") for name in ("account", "subject"))
    return f"{account}#{subject}" if account and subject else str(item.get(GSI3.sort_key))


Firing = Future[tuple[Outcome, float]]


@dataclass
class FireHere:
    """A sweep's timers fired in its own process, `WORKERS` at once, one subject's in turn."""

    handlers: Mapping[TimerKind, Fire]

    def __call__(
        self,
        store: Store,
        items: Sequence[Item],
        deadline: Callable[[], bool],
        report: FiringReport,
    ) -> bool:
        """Fire `items`; False if the deadline came first (what had not started waits for
        the next run)."""
        running: dict[str, Firing] = {}
        try:
            with ThreadPoolExecutor(WORKERS, thread_name_prefix="sweep") as pool:
                for item in items:
                    if deadline():
                        for firing in running.values():
                            firing.cancel()
                        return False
                    subject = subject_of(item)
                    if subject in running:
                        report.count(*running.pop(subject).result())
                    # each firing in a copy of the run's context (what it runs as, for logs)
                    running[subject] = pool.submit(copy_context().run, self._fire, store, item)
                    if len(running) >= 2 * WORKERS:
                        _settle(running, FIRST_COMPLETED, report)
                return True
        finally:
            _settle(running, ALL_COMPLETED, report)

    def _fire(self, store: Store, item: Item) -> tuple[Outcome, float]:
        """One listed timer; one that fails (or cannot be read) stays due, and the sweep
        tries it again."""
        try:
            return fire_timer(store, self.handlers, timer_from_item(item))
        except Exception:  # one timer's failure must not stop the others
            logger.exception("firing a timer failed", extra={"item": item.get(GSI3.sort_key)})
            return Outcome.FAILED, 0.0


def _settle(running: dict[str, Firing], until: str, report: FiringReport) -> None:
    """Count the firings that are done: the first to finish, or all of them (`until`)."""
    done, _ = wait(running.values(), return_when=until)
    for subject in [name for name, firing in running.items() if firing in done]:
        firing = running.pop(subject)
        if not firing.cancelled():
            report.count(*firing.result())
