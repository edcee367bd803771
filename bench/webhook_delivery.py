"""Events out, measured on AWS DynamoDB Local's stream and moto's FIFO queue with the
pipeline ``make dev`` runs (`local.events.event_pipeline`) and a verifying receiver on 127.0.0.1:

1. change-to-delivery latency, p50 and p99, against the same receiver posted to directly
   (signing and one POST: the floor), in the same run;
2. deliveries per second through one sender worker (one batch at a time) draining a
   queue, against direct sequential posts;
3. an endpoint answering 500 for 5 s, then 204: every event delivered, in order per
   incident, the attempts it took and the duplicates (by ``webhook-id``);
4. ten webhooks, one hanging past the 10 s timeout: the healthy nine's latency alone and
   beside it.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.webhook_delivery
"""

from __future__ import annotations

import logging
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from typing import Any

from bench.support.report import recording_tables, save
from incidents.events_out.endpoints import EndpointPolicy, post
from incidents.events_out.signing import delivery_headers
from incidents.events_out.webhook_models import NewWebhook
from incidents.events_out.webhooks import create_webhook
from incidents.incident.commands import add_note
from incidents.incident.create import create_incident
from incidents.models import timestamp
from incidents.requests import AddNote, CreateIncident
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from local.engines.clients import create_table, local_client, use_local_credentials
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine
from local.engines.moto_server import moto_server
from local.events.event_pipeline import publisher_poller, running, sender_poller
from local.events.messaging import Messaging, create_messaging
from local.webhook_receiver import Received, Receiver, out_of_order, serving

TABLE = "bench-webhooks"
LATENCY_EVENTS = 200
DRAIN_EVENTS = 300
RECOVERY_INCIDENTS, RECOVERY_NOTES = 5, 9
HANGING_INCIDENTS = 3
LOOPBACK = EndpointPolicy(allow_loopback=True)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def wait_until(done: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"not done within {seconds} s")
        time.sleep(0.02)


class Bench:
    """One table, one account, and the pipeline's pieces."""

    def __init__(self, store: Store, messaging: Messaging, endpoint: str) -> None:
        self.store, self.messaging, self.endpoint = store, messaging, endpoint
        self.caller = Caller(new_id("acct"), new_id("user"))

    def new_account(self) -> None:
        """Each measurement in an account of its own: no webhook of another one."""
        self.caller = Caller(new_id("acct"), new_id("user"))

    def webhook(self, receiver: Receiver, url: str) -> str:
        created = create_webhook(self.store, self.caller, NewWebhook(url=url), LOOPBACK)
        receiver.secrets.append(created.secret)
        return created.id

    def changes(self, incidents: int, notes: int, pause: float = 0.0) -> int:
        """`incidents` incidents with `notes` notes each; the number of events."""
        made = [
            create_incident(self.store, self.caller, CreateIncident(title=f"bench {n}")).summary.id
            for n in range(incidents)
        ]
        for n in range(notes):
            for incident in made:
                add_note(self.store, self.caller, incident, AddNote(text=f"note {n}"))
                time.sleep(pause)
        return incidents * (notes + 1)

    @contextmanager
    def receiving(self, direct: int) -> Iterator[tuple[Receiver, list[float]]]:
        """A verifying receiver registered as the new account's webhook, and the seconds of
        `direct` signed POSTs straight to it (the floor, measured in the same run)."""
        self.new_account()
        receiver = Receiver(secrets=[])
        with serving(receiver) as url:
            self.webhook(receiver, url)
            yield receiver, direct_posts(receiver, url, direct)

    def pipeline(self, senders: int = 8) -> Any:
        return running(
            {
                "stream": publisher_poller(self.endpoint, TABLE),
                "queue": sender_poller(self.messaging.queue_url, senders),
            }
        )


def direct_posts(receiver: Receiver, url: str, count: int) -> list[float]:
    """Seconds of each direct signed POST (the floor of a delivery)."""
    took = []
    for n in range(count):
        body = f'{{"type":"bench","timestamp":"{timestamp(datetime.now().astimezone())}","n":{n}}}'
        headers = delivery_headers(receiver.secrets, f"evt_direct{n}", int(time.time()), body)
        started = time.perf_counter()
        outcome = post(url, body.encode(), headers, LOOPBACK)
        took.append(time.perf_counter() - started)
        assert outcome.succeeded, outcome
    return took


def latency(bench: Bench) -> dict[str, float]:
    with bench.receiving(50) as (receiver, floor), bench.pipeline():
        events = bench.changes(20, LATENCY_EVENTS // 20 - 1, pause=0.005)
        wait_until(lambda: len(receiver.accepted()) >= events + 50, 120)
    spans = [got.latency for got in receiver.accepted() if got.body["type"] != "bench"]
    return {
        "events": events,
        "p50_ms": 1000 * statistics.median(spans),
        "p99_ms": 1000 * percentile(spans, 0.99),
        "direct_p50_ms": 1000 * statistics.median(floor),
    }


def throughput(bench: Bench) -> dict[str, float]:
    with bench.receiving(200) as (receiver, floor):
        with running({"stream": publisher_poller(bench.endpoint, TABLE)}):
            events = bench.changes(30, DRAIN_EVENTS // 30 - 1)
            wait_until(lambda: queued(bench.messaging) >= events, 120)
        started = time.perf_counter()
        with running({"queue": sender_poller(bench.messaging.queue_url, 1)}):
            wait_until(lambda: len(receiver.accepted()) >= events + 200, 300)
        drained = time.perf_counter() - started
    return {
        "events": events,
        "per_second": events / drained,
        "direct_per_second": len(floor) / sum(floor),
    }


def queued(messaging: Messaging) -> int:
    import boto3  # noqa: PLC0415

    sqs = boto3.client("sqs", endpoint_url=messaging.endpoint, region_name="us-east-1")
    attributes = sqs.get_queue_attributes(
        QueueUrl=messaging.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def recovery(bench: Bench) -> dict[str, float]:
    bench.new_account()
    from lambdas import sender  # noqa: PLC0415 - after the environment is set

    sender.sender().delays = (1,) * 15
    recovers_at = time.time() + 5
    receiver = Receiver(secrets=[], answer=lambda _: 500 if time.time() < recovers_at else 204)
    with serving(receiver) as url:
        bench.webhook(receiver, url)
        with bench.pipeline():
            started = time.time()
            events = bench.changes(RECOVERY_INCIDENTS, RECOVERY_NOTES)
            wait_until(lambda: len({g.webhook_id for g in receiver.accepted()}) >= events, 120)
            done = time.time() - started
    got = receiver.received
    accepted = receiver.accepted()
    return {
        "events": events,
        "delivered": len({g.webhook_id for g in accepted}),
        "attempts": len(got),
        "duplicates_accepted": len(accepted) - len({g.webhook_id for g in accepted}),
        "in_order": float(not out_of_order(got)),
        "seconds_to_all": done,
    }


def hanging(bench: Bench) -> dict[str, float]:
    bench.new_account()
    healthy = [Receiver(secrets=[]) for _ in range(9)]

    def hang(_: Received) -> int:
        time.sleep(12)
        return 204

    stuck = Receiver(secrets=[], answer=hang)
    with ExitStack() as stack, bench.pipeline():
        for receiver in healthy:
            bench.webhook(receiver, stack.enter_context(serving(receiver)))
        events = bench.changes(HANGING_INCIDENTS, 1)
        wait_until(lambda: all(len(r.accepted()) >= events for r in healthy), 60)
        alone = [g.latency for r in healthy for g in r.accepted()]
        bench.webhook(stuck, stack.enter_context(serving(stuck)))
        more = bench.changes(HANGING_INCIDENTS, 1)
        wait_until(lambda: all(len(r.accepted()) >= events + more for r in healthy), 60)
        beside = [g.latency for r in healthy for g in r.accepted()][len(alone) :]
        wait_until(lambda: len(stuck.received) >= more, 60)  # its attempts ended (timed out)
        time.sleep(1)
    return {
        "alone_p50_ms": 1000 * statistics.median(alone),
        "alone_max_ms": 1000 * max(alone),
        "beside_p50_ms": 1000 * statistics.median(beside),
        "beside_max_ms": 1000 * max(beside),
    }


@contextmanager
def environment() -> Iterator[tuple[Bench, str]]:
    """DynamoDB Local, moto's SQS and EventBridge, the table, and the handlers' settings."""
    use_local_credentials()
    with local_engine(DYNAMODB_LOCAL) as engine, moto_server() as moto:
        messaging = create_messaging(moto, name="bench", visibility=30)
        client = local_client(engine.endpoint, max_pool_connections=32)
        create_table(client, TABLE_SCHEMA, TABLE)
        os.environ.update(
            {
                "TABLE_NAME": TABLE,
                "DYNAMODB_ENDPOINT": engine.endpoint,
                "CURSOR_SECRET": "bench-cursor-secret-0123456789abcdef",
                "POWERTOOLS_METRICS_DISABLED": "true",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": "ERROR",
                **messaging.environment(),
            }
        )
        store = build_store(client, TABLE, b"bench-cursor-secret-" * 2)
        try:
            yield Bench(store, messaging, engine.endpoint), engine.description
        finally:
            store.engine.close()


def main() -> None:
    """Each measurement in turn on one table."""
    with environment() as (bench, engine):
        figures = {
            "latency": latency(bench),
            "throughput": throughput(bench),
            "recovery": recovery(bench),
            "hanging": hanging(bench),
        }
        logging.getLogger("event_pipeline").disabled = True  # the hung attempt's end is noise
    late, rate = figures["latency"], figures["throughput"]
    back, hang = figures["recovery"], figures["hanging"]
    with recording_tables():
        print(f"Webhook delivery ({engine}; moto SQS FIFO; receiver on 127.0.0.1)")
        print()
        print("| measure | events | value | baseline (same run) | ratio |")
        print("|---|---:|---:|---:|---:|")
        print(
            f"| change to delivery p50 | {late['events']} | {late['p50_ms']:.0f} ms "
            f"| {late['direct_p50_ms']:.1f} ms (direct POST) "
            f"| {late['p50_ms'] / late['direct_p50_ms']:.0f}x |"
        )
        print(f"| change to delivery p99 | {late['events']} | {late['p99_ms']:.0f} ms | - | - |")
        print(
            f"| deliveries per second, one sender worker | {rate['events']} "
            f"| {rate['per_second']:.0f}/s | {rate['direct_per_second']:.0f}/s (direct POSTs) "
            f"| {rate['per_second'] / rate['direct_per_second']:.2f}x |"
        )
        print()
        print("| fault | result |")
        print("|---|---|")
        print(
            f"| 500 for 5 s, then 204 | {back['delivered']:.0f} of {back['events']:.0f} events "
            f"delivered in {back['seconds_to_all']:.1f} s, {back['attempts']:.0f} attempts, "
            f"{back['duplicates_accepted']:.0f} accepted twice, in order per incident: "
            f"{'yes' if back['in_order'] else 'NO'} |"
        )
        print(
            f"| 1 of 10 endpoints hangs | the 9 others' latency p50 "
            f"{hang['alone_p50_ms']:.0f} ms alone, {hang['beside_p50_ms']:.0f} ms beside it "
            f"(max {hang['alone_max_ms']:.0f} / {hang['beside_max_ms']:.0f} ms) |"
        )
        print(f"written to {save('webhook_delivery', figures)}")


if __name__ == "__main__":
    main()
