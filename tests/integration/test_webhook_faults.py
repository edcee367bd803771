"""Faults on the delivery path, on DynamoDB Local's stream and moto's FIFO queue: a hanging
endpoint beside nine healthy ones, and the sender killed (SIGKILL) in the middle of a batch.
Nothing is lost, order per incident holds, and duplicates carry their first id."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from incidents.events_out.endpoints import TIMEOUT_SECONDS
from incidents.store import Caller, new_id
from local.events.event_pipeline import pipeline_pollers, publisher_poller, running
from local.events.messaging import Messaging
from local.webhook_receiver import Received, Receiver, serving
from tests.helpers.api_harness import Api
from tests.helpers.deliveries import (
    add_note,
    assert_duplicates_share_their_id,
    assert_ordered_per_incident,
    new_incident,
    register,
    wait_for,
)
from tests.integration.conftest import API_TABLE

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
HEALTHY = 9


def after_sleeping(seconds: float) -> Callable[[Received], int]:
    """An answer: 204, once `seconds` have passed."""

    def answer(_: Received) -> int:
        time.sleep(seconds)
        return 204

    return answer


def latencies(received: list[Received]) -> list[float]:
    """Seconds from each event to its accepted delivery."""
    return [got.latency for got in received if got.accepted]


def changes(api: Api, who: Caller, incidents: int) -> None:
    for n in range(incidents):
        add_note(api, who, new_incident(api, who, f"incident {n}"), "noted")


def test_a_hanging_endpoint_does_not_hold_up_the_others(
    api: Api, messaging: Messaging, dynamodb_endpoint: str
) -> None:
    alice = Caller(new_id("acct"), new_id("user"))
    healthy = [Receiver(secrets=[]) for _ in range(HEALTHY)]
    hanging = Receiver(secrets=[], answer=after_sleeping(12))
    pollers = pipeline_pollers(dynamodb_endpoint, API_TABLE, messaging.queue_url)
    with ExitStack() as stack, running(pollers):
        for receiver in healthy:
            register(api, alice, receiver, stack.enter_context(serving(receiver)))
        changes(api, alice, 3)
        wait_for(lambda: all(len(r.accepted()) >= 6 for r in healthy), 30)
        before = [s for r in healthy for s in latencies(r.received)]
        register(api, alice, hanging, stack.enter_context(serving(hanging)))
        changes(api, alice, 3)
        wait_for(lambda: all(len(r.accepted()) >= 12 for r in healthy), 30)
        after = [s for r in healthy for s in latencies(r.received)][len(before) :]
    assert len(after) == HEALTHY * 6
    # A healthy delivery held behind the hanging one would wait out its attempt's timeout:
    # half of it above the slowest delivery before tells that apart from a loaded machine.
    assert max(after) < max(before) + TIMEOUT_SECONDS / 2, (before, after)
    print(f"healthy p50 {statistics.median(before):.3f} s alone, {statistics.median(after):.3f} s")


@contextmanager
def sender_process() -> Iterator[subprocess.Popen[bytes]]:
    """``python -m local.events.event_pipeline --only sender`` with the suite's environment."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'layers/shared/python'}:{ROOT}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "local.events.event_pipeline", "--only", "sender"], cwd=ROOT, env=env
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


def test_a_sender_killed_mid_batch_loses_nothing(
    api: Api, messaging: Messaging, dynamodb_endpoint: str
) -> None:
    alice = Caller(new_id("acct"), new_id("user"))
    slow = Receiver(secrets=[], answer=after_sleeping(0.2))
    with serving(slow) as url, running({"stream": publisher_poller(dynamodb_endpoint, API_TABLE)}):
        register(api, alice, slow, url)
        incidents = [new_incident(api, alice, f"incident {n}") for n in range(5)]
        for incident in incidents:
            for n in range(3):
                add_note(api, alice, incident, f"note {n}")
        with sender_process() as first:
            wait_for(lambda: len(slow.accepted()) >= 3, 60, "the first sender's deliveries")
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        killed_at = len(slow.accepted())
        with sender_process():
            wait_for(lambda: len({d.webhook_id for d in slow.accepted()}) >= 20, 60)
    assert killed_at < 20
    got = slow.received
    assert_ordered_per_incident(got)
    assert_duplicates_share_their_id(got)
    assert len({d.webhook_id for d in got}) == 20
