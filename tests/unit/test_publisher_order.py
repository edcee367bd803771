"""The publisher keeps the stream's order: after the first record that fails, the rest of
the batch is reported failed without being tried (the stream retries from there), so an
incident's later event never enters the queue before an earlier one."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.events_out.outbox import BatchReads, Outgoing
from incidents.insights.figures import Figure
from incidents.models import ScheduleHandoff
from lambdas import publisher
from local.api.proxy_events import LocalLambdaContext


def record(seq: int) -> dict[str, Any]:
    image = {
        "PK": {"S": "acct_x#inc_y"},
        "SK": {"S": f"event#{seq:010d}"},
        "Type": {"S": "event"},
        "id": {"S": f"evt_{seq:027d}"},
        "incident_id": {"S": "inc_" + "A" * 27},
        "seq": {"N": str(seq)},
        "type": {"S": "note.added"},
        "at": {"S": "2026-11-24T08:00:00.000000Z"},
        "actor": {"M": {"user_id": {"S": "user_" + "B" * 27}}},
        "version": {"N": "1"},
        "note": {"M": {"text": {"S": f"n{seq}"}}},
    }
    return {
        "eventID": str(seq),
        "eventName": "INSERT",
        "eventSource": "aws:dynamodb",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:1:table/t/stream/x",
        "dynamodb": {"NewImage": image, "SequenceNumber": f"{seq:021d}", "Keys": {}},
    }


class FailsOn:
    def __init__(self, failing: int) -> None:
        self.failing = failing
        self.published: list[int] = []

    def publish(self, item: Outgoing, batch: BatchReads) -> list[Figure]:
        assert not isinstance(item.event, ScheduleHandoff)
        seq = item.event.seq
        if seq == self.failing:
            raise RuntimeError("EventBridge refused it")
        self.published.append(seq)
        return []


def test_the_records_after_a_failure_are_not_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FailsOn(failing=2)
    monkeypatch.setattr(publisher, "publisher", lambda: fake)
    answer = publisher.handler({"Records": [record(n) for n in (1, 2, 3)]}, LocalLambdaContext())
    assert fake.published == [1]
    assert [f["itemIdentifier"] for f in answer["batchItemFailures"]] == [
        f"{2:021d}",
        f"{3:021d}",
    ]


def test_other_items_of_the_stream_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FailsOn(failing=0)
    monkeypatch.setattr(publisher, "publisher", lambda: fake)
    summary = record(1)
    summary["dynamodb"]["NewImage"]["Type"] = {"S": "summary"}
    removed = {**record(2), "eventName": "REMOVE"}
    answer = publisher.handler({"Records": [summary, removed, record(3)]}, LocalLambdaContext())
    assert (fake.published, answer["batchItemFailures"]) == ([3], [])
