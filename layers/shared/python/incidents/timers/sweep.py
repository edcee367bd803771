"""The sweep: every due timer fired once, at most a minute and one sweep late.

Each run reads the due buckets from the first minute it has not finished (the marker) to
the current one with the fan-out engine's ``parallel`` strategy (every shard of a minute
at once, to its end, only what is due by now: one Query a shard per 1,000 timers, no merge
to pay for, since firing needs no order), and fires each timer through its kind's
handler, `WORKERS` at once (the timers of one subject one after another). A handler
fires in one transaction with `schedule.claim`, the timer's conditional delete: a timer
moved since the index listed it, or fired by an overlapping run, fails its claim and is
left alone, so a run that dies mid-page loses nothing (the marker has not moved) and
repeats nothing (the claims are gone). GSI3 is eventually consistent: a timer set a moment
ago may not be listed yet, so a bucket is read again by every run until its minute is
`SETTLE` behind, and only then does the marker pass it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextvars import copy_context
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import Enum

from botocore.exceptions import ClientError

from dynashard import PartitionStream, SortKeyRange, shard_keys
from dynashard.query import Item, PageStats
from incidents.keys import due_bucket_base, schedule_meta, sweep_marker_key
from incidents.models import timestamp
from incidents.store import Store, condition_failed
from incidents.table import GSI3, PK, SK, item_key
from incidents.timers.schedule import Timer, TimerKind, minute_of, timer_from_item

logger = logging.getLogger(__name__)

SETTLE = timedelta(minutes=2)
"""How long after its minute a bucket is still read: far longer than GSI3 takes to list a
timer, so none is passed over."""
PAGE_SIZE = 1000
"""Timers a Query of one shard asks for (DynamoDB's 1 MB comes first for large ones)."""
MINUTE = timedelta(minutes=1)
WORKERS = 8
"""Timers fired at once: each firing is a few round trips of its own (a read, a
transaction), so a run fires several in the time of one (`bench.timers` measures it)."""

Fire = Callable[[Store, Timer], bool]
"""What firing a timer does, in one transaction with its claim; False when the claim
failed (the timer was moved or fired meanwhile)."""


@dataclass
class SweepReport:
    """What one run did: timers fired, claims lost, buckets read (their Queries and read
    units), how late each fired timer was (seconds), and timers whose handler failed (left
    for the next run)."""

    fired: int = 0
    lost: int = 0
    buckets: int = 0
    read_units: float = 0.0
    requests: int = 0
    late_seconds: list[float] = field(default_factory=list)
    failed: int = 0
    finished: bool = True
    """Whether the run reached the current minute before its deadline."""


def sweep(
    store: Store,
    now: datetime,
    handlers: Mapping[TimerKind, Fire],
    *,
    deadline: Callable[[], bool] = lambda: False,
) -> SweepReport:
    """Fire every timer due by `now`, bucket by bucket from the marker; stop between timers
    once `deadline()` is true (the next run goes on from the marker)."""
    run = _Run(store, now, handlers, deadline)
    settled = minute_of(now - SETTLE)
    minute = _marker(store, settled)
    while minute <= minute_of(now):
        failed_before = run.report.failed
        if deadline() or not run.bucket(minute):
            run.report.finished = False
            return run.report
        run.report.buckets += 1
        if minute <= settled and run.report.failed == failed_before:
            _advance(store, minute)
        minute = _next(minute)
    return run.report


class Outcome(Enum):
    """What firing one timer did."""

    FIRED = "fired"
    LOST = "lost"
    FAILED = "failed"


Firing = Future[tuple[Outcome, float]]


@dataclass
class _Run:
    """One sweep: what it reads with, fires with, and has done."""

    store: Store
    now: datetime
    handlers: Mapping[TimerKind, Fire]
    deadline: Callable[[], bool]
    report: SweepReport = field(default_factory=SweepReport)

    def bucket(self, minute: str) -> bool:
        """Fire the bucket's timers due by now; False if the deadline came first."""
        store = self.store
        count = store.due.get(schedule_meta()).read_count
        due_by = SortKeyRange.less_than(f"{timestamp(self.now)}$")  # "<due_at>#..." to now
        streams = [
            PartitionStream(
                store.table_name,
                GSI3.partition_key,
                key,
                GSI3.sort_key,
                index_name=GSI3.name,
                sort_range=due_by,
            )
            for key in shard_keys(due_bucket_base(minute), count)
        ]
        stats = PageStats(streams=len(streams))
        items = store.engine.read_all(streams, page_size=PAGE_SIZE, stats=stats)
        running: dict[str, Firing] = {}
        try:
            with ThreadPoolExecutor(WORKERS, thread_name_prefix="sweep") as pool:
                for item in items:
                    if self.deadline():  # what has not started waits for the next run
                        for firing in running.values():
                            firing.cancel()
                        return False
                    subject = _subject(item)
                    if subject in running:  # one subject's timers in turn: they would race
                        self.count(running.pop(subject))
                    # each firing in a copy of the run's context (what it runs as, for logs)
                    running[subject] = pool.submit(copy_context().run, self.fire, item)
                    if len(running) >= 2 * WORKERS:
                        self.settle(running, FIRST_COMPLETED)
                return True
        finally:
            self.settle(running, ALL_COMPLETED)
            items.close()
            self.report.requests += stats.requests
            self.report.read_units += stats.read_units

    def settle(self, running: dict[str, Firing], until: str) -> None:
        """Count the firings that are done: the first to finish, or all of them (`until`)."""
        done, _ = wait(running.values(), return_when=until)
        for subject in [name for name, firing in running.items() if firing in done]:
            firing = running.pop(subject)
            if not firing.cancelled():
                self.count(firing)

    def count(self, firing: Firing) -> None:
        """Add one firing to the report."""
        outcome, late = firing.result()
        if outcome is Outcome.FIRED:
            self.report.fired += 1
            self.report.late_seconds.append(late)
        elif outcome is Outcome.LOST:
            self.report.lost += 1
        else:
            self.report.failed += 1

    def fire(self, item: Item) -> tuple[Outcome, float]:
        """Fire one timer as the index lists it, and how late it fired (seconds); one that
        fails (or cannot be read) stays due and holds the marker at its minute, so every
        run tries it again."""
        try:
            timer = timer_from_item(item)
            fired = self.handlers[timer.kind](self.store, timer)
        except Exception:  # one timer's failure must not stop the others
            logger.exception("firing a timer failed", extra={"item": item.get(GSI3.sort_key)})
            return Outcome.FAILED, 0.0
        if not fired:
            return Outcome.LOST, 0.0
        late = self.store.clock() - timer.due_at  # when it fired, not when the run began
        return Outcome.FIRED, late.total_seconds()


def _subject(item: Item) -> str:
    """What a listed timer is about, across accounts (an unreadable item: its own key)."""
    account, subject = (item.get(name, {}).get("S") for name in ("account", "subject"))
    return f"{account}#{subject}" if account and subject else str(item.get(SK))


def _marker(store: Store, settled: str) -> str:
    """The first minute the sweep has not finished. A table's first run starts `SETTLE`
    back: the schedule is deployed with the API that sets the timers, so none is due
    before its first runs."""
    item = store.get(*sweep_marker_key())
    return item["minute"]["S"] if item is not None else settled


def _advance(store: Store, minute: str) -> None:
    """Move the marker past `minute`, only from `minute` itself: a run never passes a
    minute whose timers failed (the marker stays there), nor one another run moved it off."""
    pk, sk = sweep_marker_key()
    try:
        store.client.put_item(
            TableName=store.table_name,
            Item={**item_key(pk, sk), "Type": {"S": "sweep_marker"},
                  "minute": {"S": _next(minute)}},
            ConditionExpression=f"attribute_not_exists({PK}) OR #minute = :minute",
            ExpressionAttributeNames={"#minute": "minute"},
            ExpressionAttributeValues={":minute": {"S": minute}},
        )  # fmt: skip
    except ClientError as error:
        if not condition_failed(error):
            raise


def _next(minute: str) -> str:
    """The minute after `minute`."""
    return minute_of(datetime.strptime(minute, "%Y%m%d%H%M").replace(tzinfo=UTC) + MINUTE)
