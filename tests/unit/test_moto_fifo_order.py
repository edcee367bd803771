"""The local delivery queue keeps SQS's FIFO rule: a message group's messages come out in
order, one in flight at a time. moto decides visibility call by call, so a receive that
runs while a retried message's visibility timeout ends could hand out the group's next
message and not the retried one (a webhook got seq 2 before seq 1). `local.events.strict_sqs`
makes each receive decide at one instant; these tests move moto's clock past the retry
at every point of a receive."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import boto3
import moto.sqs.models
import pytest
from moto import mock_aws
from mypy_boto3_sqs import SQSClient
from mypy_boto3_sqs.type_defs import MessageTypeDef

import local.events.strict_sqs  # noqa: F401 - its FIFO corrections
from local.events.messaging import REGION

START = int(time.time() * 1000)
"""Now, in ms (moto checks retention against its own clock)."""
RETRIED_UNTIL = START + 5_000
"""The instant the retried head of group B becomes visible again."""
SWEEP = 60
"""Points of a receive the clock moves at: a receive of these three messages reads the
clock fewer times (16 here), so the sweep covers every point and moving never."""


class SteppingClock:
    """moto's clock: `before` for its first `calls` readings, then `after`."""

    def __init__(self, calls: int, before: int, after: int) -> None:
        self.calls, self.before, self.after, self.read = calls, before, after, 0

    def __call__(self) -> float:
        self.read += 1
        return self.before if self.read <= self.calls else self.after


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int, int], None]]:
    def set_clock(now: int, switch_after: int = 10**9, then: int | None = None) -> None:
        fake = SteppingClock(switch_after, now, now if then is None else then)
        monkeypatch.setattr(moto.sqs.models, "unix_time_millis", fake)

    with mock_aws():
        yield set_clock


def bodies(messages: list[MessageTypeDef]) -> list[str]:
    return [m["Body"] for m in messages]


def retried_and_released(clock: Callable[..., None]) -> tuple[SQSClient, str]:
    """Group B's head retried in 5 s and its next message released untried; group C's
    head retried in 1 s (a failed batch of two groups)."""
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(
        QueueName="order.fifo", Attributes={"FifoQueue": "true", "VisibilityTimeout": "30"}
    )["QueueUrl"]
    clock(START)
    for body, group in (("B1", "B"), ("C1", "C"), ("B2", "B")):
        sqs.send_message(
            QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=body
        )
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert bodies(received) == ["B1", "C1", "B2"]
    handles = {m["Body"]: m["ReceiptHandle"] for m in received}
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handles["B1"], VisibilityTimeout=5)
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handles["C1"], VisibilityTimeout=1)
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handles["B2"], VisibilityTimeout=0)
    return sqs, url


@pytest.mark.parametrize("switch_after", range(SWEEP))
def test_a_groups_next_message_never_overtakes_its_retried_one(
    clock: Callable[..., None], switch_after: int
) -> None:
    sqs, url = retried_and_released(clock)
    # A receive that starts just before B1 is due and ends just after it.
    clock(RETRIED_UNTIL - 1, switch_after, RETRIED_UNTIL + 1)
    got = bodies(sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"])
    assert "B2" not in got or got[: got.index("B2")].count("B1") == 1, got


def test_a_retried_message_comes_back_first_in_its_group(clock: Callable[..., None]) -> None:
    sqs, url = retried_and_released(clock)
    clock(RETRIED_UNTIL - 1)
    assert bodies(sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]) == ["C1"]
    clock(RETRIED_UNTIL + 1)
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert bodies(got) == ["B1", "B2"]
