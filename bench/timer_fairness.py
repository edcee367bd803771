"""Timers on time for every account: one attacker account with a backlog due in one minute
beside victim accounts with a few timers each, through the real sweep, the firing queue (on
moto's SQS) and workers firing on DynamoDB Local.

Reproduce: ``make bench`` (or ``python -m bench.timer_fairness``; ``ATTACKER`` and
``VICTIMS`` scale it). The store's clock is simulated: each run starts on its minute (or
when the previous one finished, if later) and runs on in real time while its timers fire.

- **Fairness**: the attacker's backlog and the victims' timers are due in the same minute;
  the sweep hands the accounts on in rounds, the attacker at its rate a run
  (`timerFiringsPerMinute`), so the victims' lateness should not depend on the backlog.
  The baseline, in the same run: the same load through the same queue and workers, handed
  on in due order with no rate, as the sweep was.
- **Exactly once**: every firing writes a ``fired#`` item conditioned on its absence in the
  claim's transaction (`local.workloads.timer_accounts`): counted against the table.
- **Scaling**: the same firing path with 1, 2, 4 and 8 workers on one queue of due timers
  of many accounts: firings a second, as a ratio to one worker.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from bench.support.consumed import Units
from bench.support.report import recording_tables, save
from dynashard.query import Item
from incidents.store import Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.timers.fairness import DEFAULT_FIRINGS_PER_MINUTE, FiringBudget
from incidents.timers.firing import fire_timer
from incidents.timers.firing_queue import FiringQueue, timer_from_message
from incidents.timers.schedule import TimerKind
from incidents.timers.sweep import SweepReport, sweep
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine
from local.engines.moto_server import moto_server
from local.events.messaging import REGION
from local.workloads.timer_accounts import account_timers, fired, record_firing, write_timers

ATTACKER = int(os.environ.get("ATTACKER", "100000"))
VICTIMS = int(os.environ.get("VICTIMS", "50"))
VICTIM_TIMERS = 10
SCALING_TIMERS = int(os.environ.get("SCALING_TIMERS", "2000"))
T0 = datetime(2027, 6, 1, 3, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
WORKERS = (1, 2, 4, 8)
ROUND_TRIP = 0.010
"""An in-region request's network time, which DynamoDB Local on this machine does not
have: added to each request, it shows what workers overlap in the cloud."""
TABLE = "bench-timer-fairness"


class Clock:
    """A run's simulated start plus the real seconds since it started."""

    def __init__(self) -> None:
        self.at, self.since = T0, time.perf_counter()

    def __call__(self) -> datetime:
        return self.at + timedelta(seconds=time.perf_counter() - self.since)

    def start(self, at: datetime) -> None:
        """A run at `at`, or now if the last one ran past it."""
        self.reset(max(at, self()))

    def reset(self, at: datetime) -> None:
        """The clock at `at` from now on (the set-up's own time is not the sweep's)."""
        self.at, self.since = at, time.perf_counter()


def drain(store: Store, sqs: Any, url: str, workers: int) -> int:
    """`workers` threads receive batches of 10, fire each timer and delete what fired, until
    the queue is empty: the timers fired."""
    handlers = {TimerKind.HEARTBEAT: record_firing()}
    count, lock = [0], threading.Lock()

    def work() -> None:
        while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
            for message in batch:
                fire_timer(store, handlers, timer_from_message(message["Body"]))
            sqs.delete_message_batch(QueueUrl=url, Entries=[
                {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(batch)
            ])  # fmt: skip
            with lock:
                count[0] += len(batch)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda _: work(), range(workers)))
    return count[0]


def percentile(values: list[float], share: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * share // 1) - 1).__int__()] if ordered else 0.0


class DueOrder(FiringBudget):
    """The sweep as it was: every due timer at once, in due order, whatever its account."""

    def in_rounds(self, items: Iterable[Item]) -> list[Item]:
        """`items` as listed (no rounds, no rate)."""
        return list(items)


def fairness(
    store: Store, queue: FiringQueue, clock: Clock, budget: Callable[[], FiringBudget],
    start: datetime,
) -> dict[str, Any]:  # fmt: skip
    """The attacker's backlog and the victims' timers, due in the minute from `start`,
    through run after run, each run with a new `budget`."""
    attacker, victims = new_id("acct"), [new_id("acct") for _ in range(VICTIMS)]
    write_timers(store, account_timers(attacker, ATTACKER, start, spread=timedelta(seconds=50)))
    victims_due = start + timedelta(seconds=55)
    for victim in victims:
        write_timers(store, account_timers(victim, VICTIM_TIMERS, victims_due))
    clock.reset(start - timedelta(seconds=1))
    sweep(store, clock(), queue)  # the marker
    units, queue_requests = Units(store.client), [0]
    hook = "before-call.sqs.*"
    queue.sqs.meta.events.register(
        hook, lambda **_: queue_requests.__setitem__(0, queue_requests[0] + 1), unique_id="count"
    )
    runs: list[SweepReport] = []
    started = time.perf_counter()
    minute = 1
    while not runs or runs[-1].queued or runs[-1].held:
        clock.start(start + minute * MINUTE)
        runs.append(sweep(store, clock(), queue, budget=budget()))
        drain(store, queue.sqs, queue.url, WORKERS[-1])
        minute += 1
    queue.sqs.meta.events.unregister(hook, unique_id="count")
    late = [
        (at - victims_due).total_seconds()
        for victim in victims
        for at in fired(store, victim).values()
    ]
    attacker_fired = fired(store, attacker)
    return {
        "attacker_timers": ATTACKER, "victims": VICTIMS, "victim_timers": VICTIM_TIMERS,
        "rate_per_minute": DEFAULT_FIRINGS_PER_MINUTE, "workers": WORKERS[-1],
        "runs": len(runs), "fired_attacker": len(attacker_fired), "fired_victims": len(late),
        "victim_late_p50_s": statistics.median(late), "victim_late_p99_s": percentile(late, 0.99),
        "attacker_drain_s": (max(attacker_fired.values()) - start).total_seconds(),
        "sweep_read_units": sum(run.read_units for run in runs),
        "read_units": units.read, "write_units": units.billed_small_writes(),
        "dynamodb_requests": units.requests, "queue_requests": queue_requests[0],
        "queries": sum(run.requests for run in runs),
        "real_seconds": time.perf_counter() - started,
    }  # fmt: skip


def scaling(
    store: Store, queue: FiringQueue, clock: Clock, round_trip: float = 0.0
) -> list[dict[str, float]]:
    """Firings a second with each of `WORKERS` draining the same load; `round_trip`:
    seconds added to each DynamoDB request (the network a local engine does not have)."""
    hook = "before-send.dynamodb.*"
    if round_trip:
        store.client.meta.events.register(hook, _waiting(round_trip), unique_id="round-trip")
    try:
        return [_drained(store, queue, clock, workers) for workers in WORKERS]
    finally:
        store.client.meta.events.unregister(hook, unique_id="round-trip")


def _waiting(seconds: float) -> Callable[..., None]:
    def wait(**_: Any) -> None:
        time.sleep(seconds)

    return wait


def _drained(store: Store, queue: FiringQueue, clock: Clock, workers: int) -> dict[str, float]:
    """One load of due timers (20 accounts), swept and drained by `workers`."""
    due = clock() + timedelta(minutes=1)
    for _ in range(20):
        write_timers(store, account_timers(new_id("acct"), SCALING_TIMERS // 20, due))
    clock.reset(due + timedelta(seconds=1))
    sweep(store, clock(), queue)
    started = time.perf_counter()
    count = drain(store, queue.sqs, queue.url, workers)
    return {"workers": workers, "fired": count,
            "per_second": count / (time.perf_counter() - started)}  # fmt: skip


def main() -> None:
    """Measure on a fresh DynamoDB Local and moto; print the tables; save the JSON."""
    with local_engine(DYNAMODB_LOCAL) as engine, moto_server() as endpoint:
        client = local_client(engine.endpoint, max_pool_connections=32)
        create_table(client, TABLE_SCHEMA, TABLE)
        store = build_store(client, TABLE, b"bench-timer-fairness-secret-32by")
        clock = Clock()
        store.clock = clock
        sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=REGION,
                           aws_access_key_id="local", aws_secret_access_key="local")  # fmt: skip
        url = sqs.create_queue(QueueName="timers.fifo", Attributes={"FifoQueue": "true"})
        queue = FiringQueue(sqs, url["QueueUrl"])
        result = fairness(store, queue, clock, lambda: FiringBudget(DEFAULT_FIRINGS_PER_MINUTE), T0)
        before = fairness(store, queue, clock, DueOrder, T0 + 3 * timedelta(hours=1))
        rows = scaling(store, queue, clock)
        remote = scaling(store, queue, clock, ROUND_TRIP)
    print(
        f"One attacker account with {ATTACKER:,} timers due in one minute beside {VICTIMS} "
        f"accounts with {VICTIM_TIMERS} each (due 5 s after the attacker's last), rate "
        f"{DEFAULT_FIRINGS_PER_MINUTE:,} a minute an account, 8 workers, on {engine.description}\n"
    )
    print("| sweep | fired (attacker / victims) | victims late p50 / p99 (s) | vs in due "
          "order | attacker drained (s) | runs | write units / firing (floor 4) | read units "
          "/ firing | queue requests / firing |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, row in (
        ("rounds, at each account's rate", result),
        ("in due order (before)", before),
    ):
        fired_all = row["fired_attacker"] + row["fired_victims"]
        print(
            f"| {name} | {row['fired_attacker']:,} / {row['fired_victims']:,} "
            f"| {row['victim_late_p50_s']:.1f} / {row['victim_late_p99_s']:.1f} "
            f"| {row['victim_late_p99_s'] / before['victim_late_p99_s']:.2f}x "
            f"| {row['attacker_drain_s']:.0f} | {row['runs']} "
            f"| {row['write_units'] / fired_all:.2f} | {row['read_units'] / fired_all:.2f} "
            f"| {row['queue_requests'] / fired_all:.2f} |"
        )
    print("\n| workers | fired | firings / s | vs one worker | with 10 ms a request "
          "| vs one worker |\n|---:|---:|---:|---:|---:|---:|")  # fmt: skip
    for row, far in zip(rows, remote, strict=True):
        print(f"| {row['workers']} | {row['fired']:,} | {row['per_second']:.0f} "
              f"| {row['per_second'] / rows[0]['per_second']:.2f}x | {far['per_second']:.0f} "
              f"| {far['per_second'] / remote[0]['per_second']:.2f}x |")  # fmt: skip
    print(
        "\nEach firing is one transaction of two items (the claim and the fired# record): "
        "4 write units by DynamoDB's rules, its floor. Read units are the sweep's, which "
        "reads a backlog held by its rate again each run until it drains; queue requests "
        "are the sweep's sends and the workers' receives and deletes, 10 a request."
    )
    figures = {"fairness": result, "due_order": before, "scaling": rows, "scaling_10ms": remote}
    print(f"\nwritten to {save('timer_fairness', figures)}")


if __name__ == "__main__":
    with recording_tables():
        main()
