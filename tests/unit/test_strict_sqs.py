"""The local SQS refuses what SQS refuses (`local.events.strict_sqs`): a hide past 12 hours from
the message's latest receive (moto measured it from the send, so a message older than 12
hours could never be hidden again, and allowed 12 h after a late receive's time had run),
a FIFO receive past the in-flight cap (nothing, no error) and beyond its scan window."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import moto.sqs.models
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from mypy_boto3_sqs import SQSClient

from local.events.messaging import REGION
from local.events.strict_sqs import VISIBILITY_LIMIT_SECONDS, scaled

HOUR_MS = 3_600_000


class Clock:
    def __init__(self) -> None:
        self.ms = 1_790_000_000_000.0

    def __call__(self, *_: object) -> float:
        return self.ms


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    ticking = Clock()
    monkeypatch.setattr(moto.sqs.models, "unix_time_millis", ticking)
    monkeypatch.setattr(moto.sqs.models, "unix_time", lambda *_: ticking.ms / 1000)
    with mock_aws():
        yield ticking


def fifo(sqs: SQSClient, bodies: list[tuple[str, str]]) -> str:
    url = sqs.create_queue(
        QueueName="strict.fifo", Attributes={"FifoQueue": "true", "VisibilityTimeout": "30"}
    )["QueueUrl"]
    for body, group in bodies:
        sqs.send_message(
            QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=body
        )
    return url


def receive(sqs: SQSClient, url: str) -> list[str]:
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    return [m["Body"] for m in messages]


def test_twelve_hours_count_from_the_latest_receive(clock: Clock) -> None:
    sqs = boto3.client("sqs", region_name=REGION)
    url = fifo(sqs, [("a", "g")])
    clock.ms += 20 * HOUR_MS  # sent long ago: no matter
    handle = sqs.receive_message(QueueUrl=url)["Messages"][0]["ReceiptHandle"]
    sqs.change_message_visibility(
        QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=VISIBILITY_LIMIT_SECONDS
    )
    clock.ms += 10_000  # an attempt took 10 s: 12 h more would be 12 h 10 s in all
    with pytest.raises(ClientError, match=r"beyond the limit \[43200 seconds\]"):
        sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=VISIBILITY_LIMIT_SECONDS
        )
    sqs.change_message_visibility(
        QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=VISIBILITY_LIMIT_SECONDS - 10
    )


def test_a_fifo_receive_stops_at_the_in_flight_cap_without_an_error(clock: Clock) -> None:
    sqs = boto3.client("sqs", region_name=REGION)
    url = fifo(sqs, [(str(n), f"g{n}") for n in range(5)])
    with scaled(in_flight=3, scan=100):
        assert receive(sqs, url) == ["0", "1", "2"]
        assert receive(sqs, url) == [], "at the cap: nothing, and no error"
        clock.ms += 31_000  # their visibility ends: no longer in flight
        assert receive(sqs, url) == ["0", "1", "2"]


def test_a_fifo_receive_looks_through_its_scan_window_only(clock: Clock) -> None:
    sqs = boto3.client("sqs", region_name=REGION)
    url = fifo(sqs, [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")])
    with scaled(in_flight=100, scan=3):
        handles = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"]
        assert [m["Body"] for m in handles] == ["a1"]
        assert receive(sqs, url) == [], "b1 sits behind a blocked group's backlog"
        sqs.delete_message(QueueUrl=url, ReceiptHandle=handles[0]["ReceiptHandle"])
        assert receive(sqs, url) == ["a2", "a3", "b1"]
