"""Timers on time for every account (issue 64): an account with a backlog due at once beside
an account with one timer due a moment later, on a simulated clock where each firing takes
its time. A sweep that fires in due order makes the victim wait behind the whole backlog;
rounds across accounts fire the victim's timer second, the backlog drains at its account's
rate over later runs, and every timer fires exactly once (the table's ``fired#`` items)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from incidents.store import Store, new_id
from incidents.timers.fairness import FiringBudget
from incidents.timers.firing import FireHere
from incidents.timers.firing_queue import FiringQueue, timer_from_message
from incidents.timers.schedule import Timer, TimerKind, set_timer
from incidents.timers.sweep import sweep
from local.events.messaging import REGION, Messaging
from local.workloads.timer_accounts import account_timers, fired, record_firing, write_timers

pytestmark = pytest.mark.integration

T0 = datetime(2027, 5, 3, 9, 0, tzinfo=UTC)
BACKLOG = 300
RATE = 100
FIRING_SECONDS = 0.2
"""What one firing costs on the simulated clock: the backlog alone takes a minute."""


class SimulatedClock:
    """The store's clock, moved by each firing (threads fire at once: a lock)."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        return self.now

    def spend(self, timer: Timer) -> None:
        with self._lock:
            self.now += timedelta(seconds=FIRING_SECONDS)


def test_a_backlog_waits_for_its_own_account_and_fires_once(store: Store) -> None:
    attacker, victim = new_id("acct"), new_id("acct")
    write_timers(store, account_timers(attacker, BACKLOG, T0, spread=timedelta(seconds=1)))
    write_timers(store, account_timers(victim, 1, T0 + timedelta(seconds=2)))
    clock = SimulatedClock(T0)
    store.clock = clock
    handlers = {TimerKind.HEARTBEAT: record_firing(clock.spend)}
    sweep(store, T0 - timedelta(seconds=1), FireHere(handlers))  # the schedule's marker

    runs = []
    for minute in (1, 2, 3, 4):
        clock.now = max(clock.now, T0 + timedelta(minutes=minute))
        runs.append(sweep(store, clock.now, FireHere(handlers), budget=FiringBudget(RATE)))

    (victim_fired,) = fired(store, victim).values()
    late = (victim_fired - (T0 + timedelta(seconds=2))).total_seconds()
    assert late <= 60 + 2 * FIRING_SECONDS, "the victim's timer fired in the first round"
    assert [run.fired for run in runs] == [RATE + 1, RATE, RATE, 0]
    assert [run.held for run in runs] == [BACKLOG - RATE, BACKLOG - 2 * RATE, 0, 0]
    assert len(fired(store, attacker)) == BACKLOG, "every timer once (a second is refused)"
    assert sum(run.failed + run.lost for run in runs) == 0


def test_the_queue_holds_each_due_timer_once_however_often_it_is_read(
    store: Store, messaging: Messaging
) -> None:
    """Runs that read a timer again while its message waits send it again, and SQS drops
    the copy (deduplication by timer and due time); an account's backlog beyond its rate
    stays in the table, so the queue holds at most a run's rate of it."""
    sqs = boto3.client("sqs", endpoint_url=messaging.endpoint, region_name=REGION)
    url = sqs.create_queue(
        QueueName=f"timers-{new_id('q')}.fifo", Attributes={"FifoQueue": "true"}
    )["QueueUrl"]
    queue = FiringQueue(sqs, url)
    attacker, victim = new_id("acct"), new_id("acct")
    write_timers(store, account_timers(attacker, 100, T0))
    write_timers(store, account_timers(victim, 2, T0 + timedelta(seconds=5)))
    store.clock = lambda: T0
    sweep(store, T0 - timedelta(seconds=1), queue)  # the marker
    reports = [
        sweep(store, T0 + timedelta(minutes=1, seconds=s), queue, budget=FiringBudget(50))
        for s in (0, 30)
    ]
    assert [(report.queued, report.held) for report in reports] == [(52, 50), (52, 50)]

    received: list[Timer] = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
        received += [timer_from_message(message["Body"]) for message in batch]
        sqs.delete_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(batch)
            ],
        )
    assert len(received) == 52 == len({timer.identity for timer in received})
    assert sum(timer.account == victim for timer in received) == 2


def test_an_unreadable_timer_fails_alone_and_holds_only_its_minute(
    store: Store, messaging: Messaging
) -> None:
    """One item the index lists but no firing can read (a kind this version does not know)
    is counted failed; the others are queued, and the marker waits at its minute."""
    sqs = boto3.client("sqs", endpoint_url=messaging.endpoint, region_name=REGION)
    url = sqs.create_queue(
        QueueName=f"timers-{new_id('q')}.fifo", Attributes={"FifoQueue": "true"}
    )["QueueUrl"]
    queue = FiringQueue(sqs, url)
    account = new_id("acct")
    (good, odd) = account_timers(account, 2, T0)
    item = set_timer(store, odd).request["Put"]["Item"]
    item["kind"] = {"S": "from-a-later-version"}
    store.client.put_item(TableName=store.table_name, Item=item)
    write_timers(store, [good])
    store.clock = lambda: T0
    sweep(store, T0 - timedelta(seconds=1), queue)  # the marker
    report = sweep(store, T0 + timedelta(minutes=3), queue)
    assert (report.queued, report.failed) == (1, 1)
    again = sweep(store, T0 + timedelta(minutes=4), queue)
    assert again.failed == 1, "its minute is read again: the marker waits there"
