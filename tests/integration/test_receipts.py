"""Providers' receipts on DynamoDB Local, through the receipts function: a page's email sent
with its provider's id is found by that id (GSI3) when SES's event comes, and marked
delivered or failed once; the change goes on the timeline as any settling does; a receipt
for a message that is not ours, or one that came before, changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.contacts.messages import MessageStatus, OutgoingMessage
from incidents.contacts.models import Channel
from incidents.keys import NOTIFICATION_PREFIX
from incidents.models import EventType
from incidents.notifications.channels import Carriers, Handed
from incidents.notifications.decisions import decide_notifications, notifications_of
from incidents.notifications.delivery import deliver
from incidents.notifications.logged import is_settled_notification, log_notification
from lambdas import receipts, runtime
from local.api.call_log import RUNNING
from local.api.proxy_events import LocalLambdaContext
from tests.helpers.api_harness import Api
from tests.helpers.paging_world import World, jobs
from tests.helpers.providers import Slack

pytestmark = pytest.mark.integration


class Numbered:
    """A provider that takes every message and names it, as SES does."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def hand(self, message: OutgoingMessage) -> Handed:
        self.ids.append(f"ses-{len(self.ids)}-{message.contact_method_id}")
        return Handed(sent=True, message_id=self.ids[-1])


def ses_event(kind: str, message_id: str, **detail: Any) -> dict[str, Any]:
    return {"version": "0", "id": "e1", "detail-type": kind, "source": "aws.ses",
            "account": "111122223333", "time": "2026-11-29T10:00:00Z", "region": "us-east-1",
            "resources": [], "detail": {"mail": {"messageId": message_id}, **detail}}  # fmt: skip


def receive(event: dict[str, Any]) -> None:
    """The receipts function, as EventBridge invokes it (its calls recorded as its own)."""
    token = RUNNING.set("receipts")
    try:
        receipts.handler(event, LocalLambdaContext())
    finally:
        RUNNING.reset(token)


@pytest.fixture
def emailed(api: Api, slack: Slack, monkeypatch: pytest.MonkeyPatch) -> tuple[World, str, str]:
    """Bob paged, his email sent by a provider that names it: the world, the incident and
    the email's provider id."""
    store = runtime.store()
    monkeypatch.setattr(store, "clock", store.clock)  # the world's clock, undone after
    world = World(store, slack.url)
    incident, record = world.paged()
    decided = decide_notifications(store, record["dynamodb"]["NewImage"])
    provider = Numbered()
    carriers: Carriers = {Channel.EMAIL: provider}
    (email,) = [job for job, n in zip(jobs(decided), decided, strict=True)
                if n.channel is Channel.EMAIL]  # fmt: skip
    deliver(store, carriers, email)
    return world, incident, provider.ids[0]


def email_of(world: World, incident: str) -> Any:
    (email,) = [n for n in notifications_of(world.store, world.bob.account_id, incident)
                if n.channel is Channel.EMAIL]  # fmt: skip
    return email


def test_a_delivery_receipt_marks_the_email_delivered_once_and_it_goes_on_the_timeline(
    emailed: tuple[World, str, str],
) -> None:
    world, incident, message_id = emailed
    receive(ses_event("Email Delivered", message_id, delivery={}))
    assert email_of(world, incident).status is MessageStatus.DELIVERED
    receive(ses_event("Email Bounced", message_id,
                      bounce={"bounceType": "Permanent", "bounceSubType": "General"}))  # fmt: skip
    assert email_of(world, incident).status is MessageStatus.DELIVERED, "the first final word"
    items = world.store.query_partition(f"{world.bob.account_id}#{incident}",
                                        prefix=NOTIFICATION_PREFIX)  # fmt: skip
    (delivered,) = [i for i in items if i["status"]["S"] == "delivered"]
    record = {"eventName": "MODIFY", "dynamodb": {"NewImage": delivered}}
    assert is_settled_notification(record)
    logged = log_notification(world.store, delivered)
    assert logged is not None
    assert logged.type is EventType.NOTIFICATION_DELIVERED
    assert logged.notification.message_id == message_id


def test_a_bounce_fails_a_sent_email_saying_why(emailed: tuple[World, str, str]) -> None:
    world, incident, message_id = emailed
    receive(ses_event("Email Bounced", message_id,
                      bounce={"bounceType": "Permanent", "bounceSubType": "NoEmail"}))  # fmt: skip
    email = email_of(world, incident)
    assert (email.status, email.reason) == (MessageStatus.FAILED, "bounced: Permanent/NoEmail")


def test_a_receipt_for_no_message_of_ours_or_saying_nothing_final_changes_nothing(
    emailed: tuple[World, str, str],
) -> None:
    world, incident, message_id = emailed
    receive(ses_event("Email Delivered", "another-senders-message"))
    receive(ses_event("Email Complaint Received", message_id))
    receive(ses_event("Email Delivery Delayed", message_id))
    assert email_of(world, incident).status is MessageStatus.SENT
