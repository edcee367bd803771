"""A page's notifications: one for each of its user's rules that applies now (its method
enabled and verified, its urgency the incident's, no start delay), each a conditional Put
keyed by the page and the rule, so deciding a page's notifications again never decides one
twice.

They are decided from the page's insert on the table's stream (`lambdas.publisher`), not in
the firing's transaction: a level of 10 users with 20 rules each would pass the 100 items a
transaction holds, and the stream retries a failed record until it is done, so a page
decided is never left without its notifications. The item is what the delivery path sends
and where it records what became of the message (``pending``, then ``sent`` or ``failed``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict

from dynashard.query import Item
from incidents.contacts.deliverable import deliverable_methods
from incidents.contacts.models import Channel, Urgency
from incidents.items import deserialize, from_item, to_item
from incidents.keys import NOTIFICATION_PREFIX, PAGE_TYPE, escalation_key, notification_sort_key
from incidents.models import timestamp
from incidents.store import Store, condition_failed
from incidents.table import PK, SK

NOTIFICATION_TYPE = "notification"


class NotificationStatus(StrEnum):
    """What became of a notification (GoAlert's message states, without ``delivered``:
    receipts are best effort and come later)."""

    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


class Notification(BaseModel):
    """One message of a page to one contact method of its user."""

    model_config = ConfigDict(frozen=True)

    account_id: str
    incident_id: str
    page: str
    """The page's sort key (generation, loop, level, user)."""
    user_id: str
    rule_id: str
    contact_method_id: str
    channel: Channel
    to: str
    """The method's address when the page was decided."""
    decided_at: str
    status: NotificationStatus = NotificationStatus.PENDING
    attempts: int = 0
    sent_at: str | None = None
    message_id: str | None = None
    """The provider's id of the message sent (Slack gives none)."""
    reason: str | None = None
    """Why it failed, or why its last attempt did."""

    @property
    def key(self) -> tuple[str, str]:
        """(PK, SK) of its item, in the incident's partition beside its page."""
        return self.partition(self.account_id, self.incident_id)[0], self.sort_key

    @property
    def sort_key(self) -> str:
        """Its place among the incident's notifications (`keys.notification_sort_key`)."""
        return notification_sort_key(self.page, self.rule_id)

    @staticmethod
    def partition(account: str, incident_id: str) -> tuple[str, str]:
        """The incident's partition (and its escalation's sort key)."""
        return escalation_key(account, incident_id)


def is_page_insert(record: dict[str, Any]) -> bool:
    """Whether a stream record inserts a page: the cloud event source mapping's filter
    (`stacks.event_delivery`) and the local stream poller's."""
    image = record.get("dynamodb", {}).get("NewImage", {})
    return record.get("eventName") == "INSERT" and image.get("Type", {}).get("S") == PAGE_TYPE


def decide_notifications(store: Store, page: Item, urgency: Urgency) -> list[Notification]:
    """The page's notifications, each decided unless it was (two Queries of the user's
    partition, a conditional Put each): all of them, to hand to the delivery queue, whose
    deduplication and the sender's status check keep a repeat from sending twice."""
    values = deserialize(page)
    account, user_id = values["account_id"], values["user_id"]
    notifications = [
        Notification(
            account_id=account,
            incident_id=values["incident_id"],
            page=values[SK],
            user_id=user_id,
            rule_id=found.rule.id,
            contact_method_id=found.method.id,
            channel=found.method.type.channel,
            to=found.method.address,
            decided_at=timestamp(store.clock()),
        )
        for found in deliverable_methods(store, account, user_id, urgency)
        if found.rule.start_delay_in_minutes == 0
    ]
    for notification in notifications:
        _decide(store, notification)
    return notifications


def _decide(store: Store, notification: Notification) -> None:
    """Write the notification unless it was decided before (a retried record)."""
    pk, sk = notification.key
    try:
        store.client.put_item(
            TableName=store.table_name,
            Item=to_item(notification, NOTIFICATION_TYPE, {PK: pk, SK: sk}),
            ConditionExpression=f"attribute_not_exists({PK})",
        )
    except ClientError as error:
        if not condition_failed(error):
            raise


def notifications_of(store: Store, account: str, incident_id: str) -> list[Notification]:
    """An incident's notifications, in the order their pages were decided."""
    pk, _ = escalation_key(account, incident_id)
    items = store.query_partition(pk, prefix=NOTIFICATION_PREFIX)
    return [from_item(Notification, item) for item in items]
