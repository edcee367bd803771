"""A notification rule with a start delay (PagerDuty's "after 5 minutes, call me"): its
timer, set when the page's notifications were decided, fires when the delay has passed.
It decides the notification in one transaction with its claim, on the conditions that
the incident is still triggered and its escalation has not started over since the page
(an acknowledge, a resolve or a new trigger in between stops it, however close the race);
a rule deleted, disabled or unverified meanwhile notifies nobody."""

from __future__ import annotations

from typing import Any

from dynashard.resharding import Transaction
from incidents.contacts.deliverable import deliverable_methods
from incidents.errors import DomainError
from incidents.items import deserialize, serialize
from incidents.keys import escalation_key
from incidents.models import Status
from incidents.notifications.decisions import (
    decision,
    later_subject,
    page_notification,
    still_paging,
)
from incidents.store import Store, labelled
from incidents.table import PK, SK, item_key
from incidents.timers.schedule import Timer, TimerMovedError, claim, claim_alone


class NotificationStoppedError(DomainError):
    """The incident changed between the firing's reads and its transaction: the timer stays
    due, and its next firing sees the change."""


class AlreadyDecidedError(DomainError):
    """The notification was decided by an earlier firing of the same timer (set again by
    its page's record, retried)."""


def fire_notification(store: Store, timer: Timer) -> bool:
    """Decide the notification the timer waited for, or claim it alone if nobody is to be
    notified any more; False if the claim failed."""
    incident_id, page_key, rule_id = later_subject(timer.subject)
    pk, _ = escalation_key(timer.account, incident_id)
    page = store.get(pk, page_key)
    if page is None:
        return claim_alone(store, timer)
    values = deserialize(page)
    paging = still_paging(store, values)
    if paging is None:
        return claim_alone(store, timer)
    found = deliverable_methods(store, timer.account, values["user_id"], paging.urgency)
    rules = [rule for rule in found if rule.rule.id == rule_id]
    if not rules:
        return claim_alone(store, timer)
    notification = page_notification(store, values, rules[0])
    stopped = NotificationStoppedError("the incident changed since the firing read it")
    operations = [
        labelled(claim(store, timer), TimerMovedError("the notification's timer moved")),
        labelled({"Put": decision(store, notification)}, AlreadyDecidedError("decided")),
        labelled(_still(store, paging.summary, "status", Status.TRIGGERED.value), stopped),
        labelled(_still(store, paging.escalation, "generation", paging.generation), stopped),
    ]
    try:
        store.transact_growing(lambda: Transaction(operations, None))
    except TimerMovedError:
        return False
    except AlreadyDecidedError:
        return claim_alone(store, timer)
    return True


def _still(store: Store, item: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    """A ConditionCheck that `item`'s attribute `name` is still `value`."""
    return {
        "ConditionCheck": {
            "TableName": store.table_name,
            "Key": item_key(item[PK]["S"], item[SK]["S"]),
            "ConditionExpression": "#s = :v",
            "ExpressionAttributeNames": {"#s": name},
            "ExpressionAttributeValues": serialize({":v": value}),
        }
    }
