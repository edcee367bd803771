"""The sweep: every due timer fired once, at most a minute and one sweep late, accounts in
rounds (`fairness`), each within its rate.

Each run reads the due buckets from the first minute it has not finished (the marker) to
the current one with the fan-out engine's ``parallel`` strategy (every shard of a minute
at once, to its end, only what is due by now: one Query a shard per 1,000 timers, no merge
to pay for, since firing needs no order), orders each bucket's timers in rounds across
accounts within their rates, and hands them on: to the firing queue's workers in the cloud
(`firing_queue`), or fired in this process (`firing.FireHere`). Every firing is a claim in
the transaction of what it does (`schedule.claim`): a timer moved since the index listed it,
or fired already, is left alone, so a run that dies mid-page loses nothing (the marker has
not moved) and repeats nothing (the claims are gone). GSI3 is eventually consistent: a
timer set a moment ago may not be listed yet, so a bucket is read again by every run until
its minute is `SETTLE` behind, and the marker passes it only once it is settled: every
timer it listed handed on (fired here, or sent to the firing queue), none held back by its
account's rate and none failed. A firing that then fails in a worker is the queue's to
try again, and after its last try it waits in the dead-letter queue (an alarm) until it is
redriven: it never pins the marker, which would make every later run read more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from botocore.exceptions import ClientError

from dynashard import PartitionStream, SortKeyRange, shard_keys
from dynashard.query import Item, PageStats
from incidents.keys import due_bucket_base, schedule_meta, sweep_marker_key
from incidents.models import timestamp
from incidents.store import Store, condition_failed
from incidents.table import GSI3, PK, item_key
from incidents.timers.fairness import FiringBudget
from incidents.timers.firing import FiringReport
from incidents.timers.schedule import minute_of

SETTLE = timedelta(minutes=2)
"""How long after its minute a bucket is still read: far longer than GSI3 takes to list a
timer, so none is passed over."""
PAGE_SIZE = 1000
"""Timers a Query of one shard asks for (DynamoDB's 1 MB comes first for large ones)."""
MINUTE = timedelta(minutes=1)


class Dispatch(Protocol):
    """Where a run's timers go: fired here, or handed to workers."""

    def __call__(
        self,
        store: Store,
        items: Sequence[Item],
        deadline: Callable[[], bool],
        report: FiringReport,
    ) -> bool:
        """Hand `items` on in order; False if the deadline came first."""
        ...


@dataclass
class SweepReport(FiringReport):
    """What one run did: its firings (or timers queued), buckets read (their Queries and
    read units), timers held back by their account's rate, and whether it reached the
    current minute before its deadline."""

    buckets: int = 0
    read_units: float = 0.0
    requests: int = 0
    held: int = 0
    finished: bool = True


def sweep(
    store: Store,
    now: datetime,
    dispatch: Dispatch,
    *,
    budget: FiringBudget | None = None,
    deadline: Callable[[], bool] = lambda: False,
) -> SweepReport:
    """Hand on every timer due by `now`, bucket by bucket from the marker, within each
    account's `budget` for the run; stop once `deadline()` is true (the next run goes on
    from the marker)."""
    budget = budget or FiringBudget()
    report = SweepReport()
    settled = minute_of(now - SETTLE)
    minute = _marker(store, settled)
    while minute <= minute_of(now):
        items = _due(store, minute, now, report)
        failed_before, held_before = report.failed, budget.held
        chosen = budget.in_rounds(items)
        if deadline() or not dispatch(store, chosen, deadline, report):
            report.finished = False
            break
        report.buckets += 1
        done = report.failed == failed_before and budget.held == held_before
        if minute <= settled and done:
            _advance(store, minute)
        minute = _next(minute)
    report.held = budget.held
    return report


def _due(store: Store, minute: str, now: datetime, report: SweepReport) -> list[Item]:
    """The bucket's timers due by `now`, every shard read to its end."""
    count = store.due.get(schedule_meta()).read_count
    due_by = SortKeyRange.less_than(f"{timestamp(now)}$")  # "<due_at>#..." to now
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
    try:
        listed = sorted(items, key=lambda item: item[GSI3.sort_key]["S"])  # due order
    finally:
        items.close()
        report.requests += stats.requests
        report.read_units += stats.read_units
    return listed


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
