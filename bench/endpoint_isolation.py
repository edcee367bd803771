"""Events out when an endpoint misbehaves (issue 37), measured:

1. **Slow**: another account's endpoint answering 204 after 9.5 s to 100 deliveries; a
   healthy webhook's change-to-delivery latency beside it against its latency alone, in
   the same run (DynamoDB Local's stream, moto's SQS, the real pipeline: 20 sender
   invocations as the stage's mapping);
2. **Trickling**: an endpoint sending one header byte every 2 s for 40 s: its attempts
   logged ``timed out`` near 10 s, the healthy webhook's latency beside it;
3. **Failing for 2 hours with 1,000 open incidents** (simulated time, the real sender
   handler on the local SQS held to SQS's limits, scaled down 1,000x: 120 in flight, a
   120-message scan window): the failing endpoint's messages in flight at most, and when
   another account's 50 deliveries queued behind them went out, with the circuit and
   without it;
4. **The retry schedule** under the same queue: attempts, hours, receives, longest hide.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.endpoint_isolation
"""

from __future__ import annotations

import dataclasses
import random
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from typing import Any
from unittest.mock import patch

from bench.support.report import recording_tables, save
from bench.webhook_delivery import LOOPBACK, Bench, environment, percentile, wait_until
from incidents.events_out.delivery_messages import SENDER_MAX_CONCURRENCY, DeliveryMessage
from incidents.events_out.endpoints import Outcome
from incidents.events_out.sender import RETRY_DELAYS, Sender
from incidents.events_out.webhook_models import NewWebhook
from incidents.events_out.webhooks import create_webhook, delete_webhook
from incidents.items import deserialize
from incidents.keys import deliveries_partition
from incidents.models import EventType
from incidents.store import Caller, Store, new_id
from local.events.sender_simulation import SimClock, invoking, run, simulated_queue, without_circuit
from local.events.strict_sqs import scaled
from local.webhook_receiver import Received, Receiver, serving

SLOW_SECONDS, TRICKLE_SECONDS, QUEUED = 9.5, 40, 100
SETTLE_SECONDS = 12
"""Between phases: an attempt ends within its 10 s deadline."""
HEALTHY_INCIDENTS, HEALTHY_NOTES = 20, 1
FAILING_INCIDENTS, FAILING_FOR = 1_000, 2 * 3600
IN_FLIGHT_CAP = SCAN_WINDOW = 120


def healthy_latencies(bench: Bench, receiver: Receiver) -> list[float]:
    """Seconds from change to delivery of the healthy account's next events."""
    before = len(receiver.accepted())
    events = bench.changes(HEALTHY_INCIDENTS, HEALTHY_NOTES, pause=0.05)
    wait_until(lambda: len(receiver.accepted()) >= before + events, 120)
    return [got.latency for got in receiver.accepted()[before:]]


def figures(latencies: list[float]) -> dict[str, float]:
    return {
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * percentile(latencies, 0.99),
        "max_ms": 1000 * max(latencies),
    }


class Concurrency:
    """An answer that sleeps (after `quick` prompt ones), counting the attempts running at
    once."""

    def __init__(self, seconds: float, quick: int = 0) -> None:
        self.seconds, self.quick, self.running, self.most = seconds, quick, 0, 0
        self.lock = threading.Lock()

    def __call__(self, _: Received) -> int:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.quick -= 1
        time.sleep(self.seconds if self.quick < 0 else 0)
        with self.lock:
            self.running -= 1
        return 204


@contextmanager
def trickling(seconds: float) -> Iterator[str]:
    """An endpoint answering ``HTTP/1.1 200 OK`` then one header byte every 2 s."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            for _ in range(int(seconds / 2)):
                if stop.wait(2):
                    return
                try:
                    conn.sendall(b"X")
                except OSError:
                    return

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:  # closed: the bench is over
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hooks"
    finally:
        stop.set()
        server.close()


def beside(
    bench: Bench,
    receiver: Receiver,
    bad: tuple[Receiver, str],
    deliveries: int,
    *,
    logged: int = 0,
    warm: bool = False,
) -> tuple[list[float], list[dict[str, Any]]]:
    """The healthy webhook's latencies while another account's `bad` endpoint (its receiver
    and URL) has `deliveries` queued, and that webhook's delivery log once it holds
    `logged` attempts (the webhook is deleted afterwards: its backlog is dropped). `warm`:
    one delivery first, so the endpoint is known to answer quickly when the rest come."""
    healthy = bench.caller
    bench.new_account()
    bad_hook, bad_account = bench.webhook(*bad), bench.caller
    if warm:
        bench.changes(1, 0)
        wait_until(lambda: len(bad[0].received) >= 1, 30)
        time.sleep(1)
    bench.changes(deliveries, 0)
    bench.caller = healthy
    latencies = healthy_latencies(bench, receiver)
    log = deliveries_partition(bad_account.account_id, bad_hook)
    wait_until(lambda: len(bench.store.query_partition(log)) >= logged, 60)
    attempts = [deserialize(item) for item in bench.store.query_partition(log)]
    delete_webhook(bench.store, bad_account, bad_hook)
    return latencies, attempts


def isolation(bench: Bench) -> dict[str, Any]:
    """The healthy webhook alone, then beside another account's fast, slow and trickling
    endpoints, each with `QUEUED` deliveries queued just before (the same publishing work
    in front of the healthy events: the fast one is the baseline); one pipeline."""
    slow, fast = Concurrency(SLOW_SECONDS), Concurrency(0.0)
    turning = Concurrency(SLOW_SECONDS, quick=1)
    with ExitStack() as stack, bench.pipeline(senders=SENDER_MAX_CONCURRENCY):
        bench.new_account()
        receiver = Receiver(secrets=[])
        bench.webhook(receiver, stack.enter_context(serving(receiver)))
        healthy_latencies(bench, receiver)  # warm: the first deliveries start the pools
        alone = healthy_latencies(bench, receiver)
        endpoints = {
            "fast": Receiver(secrets=[], answer=fast),
            "slow": Receiver(secrets=[], answer=slow),
            "turning": Receiver(secrets=[], answer=turning),
        }
        urls = {name: stack.enter_context(serving(r)) for name, r in endpoints.items()}
        trickle = (Receiver(secrets=[]), stack.enter_context(trickling(TRICKLE_SECONDS)))
        results: dict[str, Any] = {"alone": figures(alone)}
        for name, bad in (
            ("fast", (endpoints["fast"], urls["fast"])),
            ("slow", (endpoints["slow"], urls["slow"])),
            ("turning", (endpoints["turning"], urls["turning"])),
            ("trickle", trickle),
        ):
            latencies, log = beside(bench, receiver, bad, QUEUED, logged=2, warm=name == "turning")
            results[name] = {**figures(latencies), **attempts_of(log)}
            time.sleep(SETTLE_SECONDS)  # its attempts still running end
    for name, counted in (("fast", fast), ("slow", slow), ("turning", turning)):
        results[name]["at_once"] = counted.most
    return results


def attempts_of(log: list[dict[str, Any]]) -> dict[str, Any]:
    """What a misbehaving endpoint's delivery log says of its attempts."""
    return {
        "logged": len(log),
        "outcomes": sorted({str(a.get("error") or a.get("response_status")) for a in log}),
        "longest_ms": max(int(a["duration_ms"]) for a in log),
    }


def message(caller: Caller, webhook: str, incident: str) -> DeliveryMessage:
    return DeliveryMessage(
        account_id=caller.account_id, webhook_id=webhook, event_id=new_id("evt"),
        type=EventType.NOTE_ADDED, incident_id=incident, seq=1,
        happened_at="2026-11-25T00:00:00.000000Z", body="{}",
    )  # fmt: skip


def webhook_to(store: Store, path: str) -> tuple[Caller, str]:
    caller = Caller(new_id("acct"), new_id("user"))
    url = f"http://127.0.0.1:9{path}"
    return caller, create_webhook(store, caller, NewWebhook(url=url), LOOPBACK).id


def failing(store: Store, with_circuit: bool) -> dict[str, float]:
    """1,000 incidents' deliveries to a failing endpoint and 50 of another account's behind
    them, on the strict queue over simulated hours: the failing endpoint's messages in
    flight at most, and when the other account's last delivery went out."""
    from lambdas import sender as handler  # noqa: PLC0415 - after the environment is set

    clock = SimClock()
    timed = dataclasses.replace(store, clock=clock.now)
    (failing_caller, failing_hook), (other, other_hook) = (
        webhook_to(timed, "/f"),
        webhook_to(timed, "/h"),
    )
    other_done: list[float] = []

    def endpoint(url: str, *_: Any) -> Outcome:
        clock.seconds += 0.05
        if url.endswith("/f") and clock.seconds < FAILING_FOR:
            return Outcome(503, None, 50)
        if url.endswith("/h"):
            other_done.append(clock.seconds)
        return Outcome(204, None, 50)

    sending = Sender(timed, LOOPBACK, poster=endpoint, rng=random.Random(3))
    with (
        simulated_queue(clock) as queue,
        scaled(IN_FLIGHT_CAP, SCAN_WINDOW),
        nullcontext() if with_circuit else without_circuit(),
        patch.multiple(
            handler, sender=lambda: sending, store=lambda: timed,
            delivery_queue=lambda: queue.queue, clock=clock.monotonic,
        ),
    ):  # fmt: skip
        queue.queue.send(
            [message(failing_caller, failing_hook, new_id("inc")) for _ in range(FAILING_INCIDENTS)]
        )
        queue.queue.send([message(other, other_hook, new_id("inc")) for _ in range(50)])
        started = time.perf_counter()
        most = run(queue, invoking(handler.handler), 12 * 3600, failing_hook)
        took = time.perf_counter() - started
    return {
        "in_flight_most": most,
        "other_delivered": len(other_done),
        "other_last_s": max(other_done),
        "wall_s": took,
    }


def schedule(store: Store) -> dict[str, float]:
    """One delivery failing every attempt (each taking 9.5 s) over 100 simulated hours."""
    from lambdas import sender as handler  # noqa: PLC0415 - after the environment is set

    clock = SimClock()
    timed = dataclasses.replace(store, clock=clock.now)
    caller, hook = webhook_to(timed, "/f")
    attempts_at: list[float] = []

    def endpoint(*_: Any) -> Outcome:
        attempts_at.append(clock.seconds)
        clock.seconds += 9.5
        return Outcome(500, None, 9500)

    sending = Sender(timed, LOOPBACK, poster=endpoint, rng=random.Random(7))
    with (
        simulated_queue(clock) as queue,
        patch.multiple(
            handler, sender=lambda: sending, store=lambda: timed,
            delivery_queue=lambda: queue.queue, clock=clock.monotonic,
        ),
    ):  # fmt: skip
        queue.queue.send([message(caller, hook, new_id("inc"))])
        run(queue, invoking(handler.handler), 100 * 3600)
        receives = sum(m.approximate_receive_count for m in queue.held()._messages)
    logged = timed.query_partition(deliveries_partition(caller.account_id, hook))
    numbers = sorted(int(item["attempt"]["N"]) for item in logged)
    return {
        "attempts": len(attempts_at),
        "scheduled": len(RETRY_DELAYS) + 1,
        "hours": (attempts_at[-1] - attempts_at[0]) / 3600,
        "numbered_exactly": float(numbers == list(range(1, len(attempts_at) + 1))),
        "left_in_queue": receives,
    }


def main() -> None:
    with environment() as (bench, engine):
        results = {
            "isolation": isolation(bench),
            "failing_circuit": failing(bench.store, with_circuit=True),
            "failing_no_circuit": failing(bench.store, with_circuit=False),
            "schedule": schedule(bench.store),
        }
    report(results, engine)


def report(results: dict[str, Any], engine: str) -> None:
    iso = results["isolation"]
    base = iso["fast"]["p99_ms"]
    on, off = results["failing_circuit"], results["failing_no_circuit"]
    plan = results["schedule"]
    with recording_tables():
        print(f"Endpoint isolation ({engine}; moto SQS FIFO; 20 sender invocations)")
        print()
        print(
            f"| another account's endpoint, {QUEUED} deliveries queued | its attempts | "
            "at once | healthy webhook p50 | p99 | max | p99 vs beside the fast one |"
        )
        print("|---|---|---:|---:|---:|---:|---:|")
        print(
            f"| none (alone) | - | - | {iso['alone']['p50_ms']:.0f} ms "
            f"| {iso['alone']['p99_ms']:.0f} ms | {iso['alone']['max_ms']:.0f} ms | - |"
        )
        labels = {
            "fast": "answers at once (baseline)",
            "slow": f"answers in {SLOW_SECONDS} s",
            "turning": f"answered at once, then in {SLOW_SECONDS} s",
            "trickle": f"trickles a header byte every 2 s for {TRICKLE_SECONDS} s",
        }
        for name, label in labels.items():
            row = iso[name]
            print(
                f"| {label} | {', '.join(row['outcomes'])}, longest {row['longest_ms']:,} ms "
                f"| {row.get('at_once', '-')} | {row['p50_ms']:.0f} ms | {row['p99_ms']:.0f} ms "
                f"| {row['max_ms']:.0f} ms | {row['p99_ms'] / base:.2f}x |"
            )
        print()
        print(
            f"| {FAILING_INCIDENTS:,} incidents' endpoint failing for 2 h (simulated; "
            f"in-flight cap and scan window {IN_FLIGHT_CAP}) | its messages in flight at most "
            "| another account's 50 delivered by | wall time |"
        )
        print("|---|---:|---:|---:|")
        for name, row in (("circuit", on), ("no circuit", off)):
            print(
                f"| {name} | {row['in_flight_most']} | {row['other_last_s']:,.0f} s "
                f"({row['other_delivered']:.0f} of 50) | {row['wall_s']:.0f} s |"
            )
        print()
        print("| retry schedule on the strict queue | value |")
        print("|---|---:|")
        print(f"| attempts (scheduled {plan['scheduled']:.0f}) | {plan['attempts']:.0f} |")
        print(f"| hours from first to last | {plan['hours']:.1f} |")
        print(
            f"| numbered 1 to 16 by the project | {'yes' if plan['numbered_exactly'] else 'NO'} |"
        )
        print(f"| messages left in the queue | {plan['left_in_queue']:.0f} |")
        print(f"written to {save('endpoint_isolation', results)}")


if __name__ == "__main__":
    main()
