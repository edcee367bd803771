"""The sender's part in paging: a notification's or a verification code's message is one
attempt (`deliver`, `send_code`); one that may be tried again is hidden in the queue for its
wait and reported failed, so its contact method's later messages wait behind it; one sent
or failed for good is deleted at once. Without ``PAGE_EMAIL_SENDER`` the stage has no
email provider (Slack it always has)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from incidents.contacts.messages import MessageStatus
from incidents.contacts.models import Channel
from incidents.events_out.delivery_messages import CodeJob, NotificationJob
from incidents.notifications.channels import EndUserMessaging, SesEmail, SlackWebhook
from incidents.notifications.delivery import Outcome
from lambdas import sender
from lambdas.settings import DEFAULT_SPEND_CAP_USD, PAGE_EMAIL_SENDER, PAGE_ORIGINATION_IDENTITY
from local.api.proxy_events import LocalLambdaContext
from tests.helpers.sqs import fifo_record

NUMBER_ARN = "arn:aws:sms-voice:us-east-1:123456789012:phone-number/phone-1"


class Queue:
    """The delivery queue's calls the handler makes, recorded."""

    def __init__(self) -> None:
        self.finished: list[str] = []
        self.hidden: list[tuple[str, int]] = []
        self.released: list[str] = []

    def done(self, handle: str) -> None:
        self.finished.append(handle)

    def retry_in(self, handle: str, seconds: int) -> None:
        self.hidden.append((handle, seconds))

    def release(self, handles: list[str]) -> None:
        self.released += handles


def record(n: int) -> dict[str, Any]:
    """A notification, then (n = 1) the method's verification code: one group, in order."""
    body: dict[str, Any] = {"kind": "notification", "account_id": "acct_1",
                            "incident_id": "inc_1", "contact_method_id": "cm_1",
                            "notification": f"notification#0001#00#01#user_1#nr_{n}"}  # fmt: skip
    if n == 1:
        expiry = "2027-04-05T10:15:05.000000Z"
        body = {"kind": "code", "account_id": "acct_1", "user_id": "user_1",
                "contact_method_id": "cm_1", "expires_at": expiry}  # fmt: skip
    return fifo_record(n, body, "cm_1#notify")


@pytest.mark.parametrize(
    ("outcome", "deleted", "hidden"),
    [
        (Outcome(MessageStatus.SENT), ["h0", "h1"], []),
        (Outcome(MessageStatus.FAILED), ["h0", "h1"], []),
        (Outcome(None), ["h0", "h1"], []),
        (Outcome(MessageStatus.PENDING, retry_in=30), [], [("h0", 30)]),
    ],
)
def test_a_notification_is_deleted_when_settled_and_hidden_for_its_retry(
    monkeypatch: pytest.MonkeyPatch, outcome: Outcome, deleted: list[str], hidden: list[Any]
) -> None:
    queue, tried = Queue(), []

    def deliver(
        _store: object, _carriers: object, job: NotificationJob | CodeJob, *_links: object
    ) -> Outcome:
        tried.append(job)
        return outcome

    monkeypatch.setattr(sender, "delivery_queue", lambda: queue)
    monkeypatch.setattr(sender, "store", lambda: None)
    monkeypatch.setattr(sender, "carriers", dict)
    monkeypatch.setattr(sender, "deliver", deliver)
    monkeypatch.setattr(sender, "send_code", deliver)
    context = LocalLambdaContext(timeout_seconds=60)
    answer = sender.handler({"Records": [record(0), record(1)]}, context)
    failures = [f["itemIdentifier"] for f in answer["batchItemFailures"]]
    assert (queue.finished, queue.hidden) == (deleted, hidden)
    if hidden:
        assert failures == ["m0", "m1"], "the retried one and its group's next, kept"
        assert queue.released == ["h1"], "its group's next back at once, behind it"
        assert len(tried) == 1
    else:
        assert failures == []
        assert [type(job) for job in tried] == [NotificationJob, CodeJob]


@pytest.fixture
def fresh_carriers() -> Iterator[None]:
    """The sender's cached providers built anew in the test, and after it whatever it did."""
    sender.carriers.cache_clear()
    yield
    sender.carriers.cache_clear()


@pytest.mark.usefixtures("fresh_carriers")
def test_the_stage_s_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (PAGE_EMAIL_SENDER, PAGE_ORIGINATION_IDENTITY):
        monkeypatch.delenv(name, raising=False)
    assert set(sender.carriers()) == {Channel.SLACK}
    assert isinstance(sender.carriers()[Channel.SLACK], SlackWebhook)
    monkeypatch.setenv(PAGE_EMAIL_SENDER, "pages@example.com")
    monkeypatch.setenv(PAGE_ORIGINATION_IDENTITY, NUMBER_ARN)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setattr(sender, "store_without_cursors", object)  # not built: it is cached
    monkeypatch.setenv("PAGE_SMS_SPEND_CAP_USD", "7")
    sender.carriers.cache_clear()
    found = sender.carriers()
    email, text, call = found[Channel.EMAIL], found[Channel.SMS], found[Channel.VOICE]
    assert isinstance(email, SesEmail)
    assert email.sender == "pages@example.com"
    assert isinstance(text, EndUserMessaging)
    assert isinstance(call, EndUserMessaging)
    assert (text.channel, call.channel) == (Channel.SMS, Channel.VOICE)
    assert (text.spend.channel, call.spend.channel) == (Channel.SMS, Channel.VOICE)
    assert text.origination_identity == call.origination_identity == NUMBER_ARN
    assert (text.spend.cap, call.spend.cap) == (Decimal(7), Decimal(DEFAULT_SPEND_CAP_USD))
