"""The sender never runs past its timeout (issue 37, point 1): an attempt starts only with
the time for a whole one (its 10 s deadline and a margin) left in the invocation; the
messages it cannot try go back to the queue at once, untried, and are reported failed so
the event source mapping keeps them (before: a batch of ten 7 s answers took 70.8 s, past
the 60 s timeout: an error, the batch redelivered, duplicates)."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.events_out.delivery_messages import SENDER_TIMEOUT_SECONDS
from incidents.events_out.endpoints import TIMEOUT_SECONDS
from incidents.events_out.sender import Attempted
from lambdas import sender
from local.api.proxy_events import LocalLambdaContext
from tests.helpers.sqs import fifo_record


class Queue:
    """The delivery queue's calls the handler makes, recorded."""

    def __init__(self) -> None:
        self.released: list[str] = []
        self.finished: list[str] = []

    def release(self, handles: list[str]) -> None:
        self.released += handles

    def done(self, handle: str) -> None:
        self.finished.append(handle)


class Attempts:
    """A sender that counts what it was asked to attempt, each attempt succeeding."""

    def __init__(self) -> None:
        self.tried: list[str] = []

    def deliver(self, message: Any) -> Attempted:
        self.tried.append(message.event_id)
        return Attempted(None)


def record(n: int) -> dict[str, Any]:
    body = {"kind": "delivery", "account_id": "acct_1", "webhook_id": "wh_1",
            "event_id": f"evt_{n}", "type": "note.added", "incident_id": "inc_1", "seq": n + 1,
            "happened_at": "2026-11-25T00:00:00Z",
            "body": "{}"}  # fmt: skip
    return fifo_record(n, body, "wh_1#inc_1")


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> tuple[Queue, Attempts]:
    queue, attempts = Queue(), Attempts()
    monkeypatch.setattr(sender, "delivery_queue", lambda: queue)
    monkeypatch.setattr(sender, "sender", lambda: attempts)
    return queue, attempts


def test_without_time_for_an_attempt_the_batch_goes_back_untried(
    fakes: tuple[Queue, Attempts],
) -> None:
    queue, attempts = fakes
    left = TIMEOUT_SECONDS + sender.MARGIN_SECONDS - 1
    context = LocalLambdaContext(timeout_seconds=left)
    answer = sender.handler({"Records": [record(n) for n in range(3)]}, context)
    assert attempts.tried == []
    assert queue.released == ["h0", "h1", "h2"], "the first at once, the rest behind it"
    assert [f["itemIdentifier"] for f in answer["batchItemFailures"]] == ["m0", "m1", "m2"]


def test_with_time_left_each_message_is_attempted(fakes: tuple[Queue, Attempts]) -> None:
    queue, attempts = fakes
    context = LocalLambdaContext(timeout_seconds=SENDER_TIMEOUT_SECONDS)
    answer = sender.handler({"Records": [record(n) for n in range(3)]}, context)
    assert attempts.tried == ["evt_0", "evt_1", "evt_2"]
    assert (queue.released, answer["batchItemFailures"]) == ([], [])
    assert queue.finished == ["h0", "h1", "h2"]


def test_the_local_context_counts_down_like_lambdas() -> None:
    context = LocalLambdaContext(timeout_seconds=0.0)
    assert context.get_remaining_time_in_millis() == 0
    assert context.overran()
    assert LocalLambdaContext(timeout_seconds=60).get_remaining_time_in_millis() > 59_000
