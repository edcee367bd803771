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

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict

from dynashard.query import Item
from dynashard.resharding import Transaction
from incidents.contacts.deliverable import Deliverable, deliverable_methods
from incidents.contacts.messages import MessageStatus
from incidents.contacts.models import Channel, Urgency
from incidents.events_out.outbox import inserts, writes
from incidents.items import deserialize, from_item, to_item
from incidents.keys import (
    NOTIFICATION_PREFIX,
    PAGE_PREFIX,
    PAGE_TYPE,
    escalation_key,
    notification_sort_key,
)
from incidents.models import Status, parse_timestamp, timestamp
from incidents.store import Store, condition_failed
from incidents.summaries import read_summary
from incidents.table import PK, SK
from incidents.timers.schedule import Timer, TimerKind, set_timer

NOTIFICATION_TYPE = "notification"
SUBJECT_SEPARATOR = "/"
"""Between a later timer's incident, page and rule: ``inc_…/0001.00.01.user_…/nr_…`` (a
timer's subject holds no ``#``, the key separator: the page's are written as dots)."""


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
    paged_at: str
    """When its page was decided (a page not sent soon after is stale)."""
    status: MessageStatus = MessageStatus.PENDING
    attempts: int = 0
    sent_at: str | None = None
    message_id: str | None = None
    """The provider's id of the message sent (Slack gives none)."""
    reason: str | None = None
    """Why it failed, or why its last attempt did."""
    policy_id: str | None = None
    """The escalation policy whose page it is (None: decided before it was kept)."""

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
    """Whether a stream record inserts a page (its notifications are decided then)."""
    return inserts(record, PAGE_TYPE)


def is_notification_insert(record: dict[str, Any]) -> bool:
    """Whether a stream record inserts a notification (it is queued to be sent then)."""
    return inserts(record, NOTIFICATION_TYPE)


def is_notification_write(record: dict[str, Any]) -> bool:
    """Whether a stream record inserts or changes a notification: what the publisher is
    handed (a change to sent or failed goes on the timeline: `notifications.logged`)."""
    return writes(record, NOTIFICATION_TYPE)


@dataclass(frozen=True)
class Paging:
    """An incident still paging: its summary and escalation items as read."""

    summary: Item
    escalation: Item

    @property
    def generation(self) -> int:
        """The escalation's start (each trigger again is one)."""
        return int(self.escalation["generation"]["N"])

    @property
    def urgency(self) -> Urgency:
        """The incident's, kept by its escalation (high for one started before it was)."""
        return Urgency(self.escalation.get("urgency", {}).get("S", Urgency.HIGH))


def still_paging(store: Store, page: dict[str, Any]) -> Paging | None:
    """The incident of `page` (its item's values) while it is still triggered and its
    escalation has not started over since the page; None once it was acknowledged,
    resolved, triggered again or deleted (a summary read and a point read)."""
    account, incident_id = page["account_id"], page["incident_id"]
    pk, escalation_sk = escalation_key(account, incident_id)
    escalation = store.get(pk, escalation_sk)
    summary = read_summary(store, account, incident_id)
    if escalation is None or summary is None:
        return None
    paging = Paging(summary, escalation)
    triggered = summary.get("status", {}).get("S") == Status.TRIGGERED.value
    return paging if triggered and paging.generation == page["generation"] else None


def decide_notifications(store: Store, page: Item) -> list[Notification]:
    """The page's notifications of rules of the incident's urgency without a start delay,
    each decided unless it was (a conditional Put each), and a timer for each rule with one,
    due its delay after the page (`incidents.notifications.later`); two Queries of the
    user's partition. Nothing once the incident stopped paging (a record handled late).
    Returns the notifications decided now."""
    values = deserialize(page)
    paging = still_paging(store, values)
    if paging is None:
        return []
    found = deliverable_methods(store, values["account_id"], values["user_id"], paging.urgency)
    notifications = [
        page_notification(store, values, rule)
        for rule in found
        if rule.rule.start_delay_in_minutes == 0
    ]
    for notification in notifications:
        try:
            store.client.put_item(**decision(store, notification))
        except ClientError as error:
            if not condition_failed(error):
                raise
    for rule in found:
        later = page_notification(store, values, rule)
        if rule.rule.start_delay_in_minutes > 0 and store.get(*later.key) is None:
            _set(store, later_timer(values, rule, store.clock()))
    return notifications


def _set(store: Store, timer: Timer) -> None:
    """Set `timer` alone (its bucket's shard count grown if that is throttled)."""
    store.transact_growing(lambda: Transaction([set_timer(store, timer)], None))


def page_notification(store: Store, page: dict[str, Any], found: Deliverable) -> Notification:
    """The notification of `page` (its item's values) through one deliverable rule."""
    return Notification(
        account_id=page["account_id"],
        incident_id=page["incident_id"],
        page=page[SK],
        user_id=page["user_id"],
        rule_id=found.rule.id,
        contact_method_id=found.method.id,
        channel=found.method.type.channel,
        to=found.method.address,
        decided_at=timestamp(store.clock()),
        paged_at=page["decided_at"],
        policy_id=page.get("policy_id"),
    )


def decision(store: Store, notification: Notification) -> dict[str, Any]:
    """The Put that decides `notification`, only if it was never decided."""
    pk, sk = notification.key
    return {
        "TableName": store.table_name,
        "Item": to_item(notification, NOTIFICATION_TYPE, {PK: pk, SK: sk}),
        "ConditionExpression": f"attribute_not_exists({PK})",
    }


def later_timer(page: dict[str, Any], found: Deliverable, now: datetime) -> Timer:
    """The timer of a rule with a start delay: due that long after its page was decided, or
    now if that has passed (a record handled late: the sweep reads no minute behind it)."""
    delay = timedelta(minutes=found.rule.start_delay_in_minutes)
    due = max(parse_timestamp(page["decided_at"]) + delay, now)
    page_part = page[SK].removeprefix(PAGE_PREFIX).replace("#", ".")
    subject = (
        f"{page['incident_id']}{SUBJECT_SEPARATOR}{page_part}{SUBJECT_SEPARATOR}{found.rule.id}"
    )
    return Timer(page["account_id"], TimerKind.NOTIFICATION, subject, due)


def later_subject(subject: str) -> tuple[str, str, str]:
    """A later timer's (incident id, page sort key, rule id)."""
    incident_id, page_part, rule_id = subject.split(SUBJECT_SEPARATOR)
    return incident_id, PAGE_PREFIX + page_part.replace(".", "#"), rule_id


def notifications_of(store: Store, account: str, incident_id: str) -> list[Notification]:
    """An incident's notifications, in the order their pages were decided."""
    pk, _ = escalation_key(account, incident_id)
    items = store.query_partition(pk, prefix=NOTIFICATION_PREFIX)
    return [from_item(Notification, item) for item in items]
