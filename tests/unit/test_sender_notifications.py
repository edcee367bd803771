"""The sender's part in paging: a notification's message is one attempt (`deliver`); one
that may be tried again is hidden in the queue for its wait and reported failed, so its
contact method's later messages wait behind it; one sent or failed for good is deleted at
once. Without ``PAGE_EMAIL_SENDER`` the stage has no email provider (Slack it always has)."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.contacts.models import Channel
from incidents.events_out.delivery_messages import NotificationJob
from incidents.notifications.channels import SesEmail, SlackWebhook
from incidents.notifications.decisions import NotificationStatus
from incidents.notifications.delivery import Outcome
from lambdas import sender
from lambdas.settings import PAGE_EMAIL_SENDER
from local.api.proxy_events import LocalLambdaContext
from tests.helpers.sqs import fifo_record


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
    body = {"kind": "notification", "account_id": "acct_1", "incident_id": "inc_1",
            "notification": f"notification#0001#00#01#user_1#nr_{n}",
            "contact_method_id": "cm_1"}  # fmt: skip
    return fifo_record(n, body, "cm_1#notify")


@pytest.mark.parametrize(
    ("outcome", "deleted", "hidden"),
    [
        (Outcome(NotificationStatus.SENT), ["h0", "h1"], []),
        (Outcome(NotificationStatus.FAILED), ["h0", "h1"], []),
        (Outcome(None), ["h0", "h1"], []),
        (Outcome(NotificationStatus.PENDING, retry_in=30), [], [("h0", 30)]),
    ],
)
def test_a_notification_is_deleted_when_settled_and_hidden_for_its_retry(
    monkeypatch: pytest.MonkeyPatch, outcome: Outcome, deleted: list[str], hidden: list[Any]
) -> None:
    queue, tried = Queue(), []

    def deliver(_store: object, _carriers: object, job: NotificationJob) -> Outcome:
        tried.append(job)
        return outcome

    monkeypatch.setattr(sender, "delivery_queue", lambda: queue)
    monkeypatch.setattr(sender, "store", lambda: None)
    monkeypatch.setattr(sender, "carriers", dict)
    monkeypatch.setattr(sender, "deliver", deliver)
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
        assert len(tried) == 2


def test_the_stage_s_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PAGE_EMAIL_SENDER, raising=False)
    sender.carriers.cache_clear()
    assert set(sender.carriers()) == {Channel.SLACK}
    assert isinstance(sender.carriers()[Channel.SLACK], SlackWebhook)
    monkeypatch.setenv(PAGE_EMAIL_SENDER, "pages@example.com")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    sender.carriers.cache_clear()
    email = sender.carriers()[Channel.EMAIL]
    assert isinstance(email, SesEmail)
    assert email.sender == "pages@example.com"
    sender.carriers.cache_clear()
