"""Paging on the incident's timeline: an ``escalation.level`` event for each person a level
paged, and a ``notification.sent``, ``notification.delivered`` or ``notification.failed``
event for each notification at each such step (a receipt's too), so webhooks and
EventBridge carry them and the log entries list them.

They are written from the table's stream (a page's insert, a notification's settling), not
in the firing's or the sender's own write: those stay one item each, never held up by a
change of the incident racing them. Each is written once: its source item is marked (its
``logged`` set) in the event's own transaction, so a record retried finds it marked.
"""

from __future__ import annotations

from typing import Any

from dynashard.query import Item
from incidents.contacts.messages import MessageStatus
from incidents.errors import DomainError, VersionConflictError
from incidents.items import deserialize
from incidents.models import EventType, PagedPerson, SentNotification, TimelineEvent
from incidents.notifications.decisions import NOTIFICATION_TYPE, Notification
from incidents.store import Caller, Store
from incidents.table import PK, SK, item_key
from incidents.timeline.events import change_operations, load_counted, pause_before_retry

LOGGED = "logged"
"""A page's or a notification's set of what is on the timeline (``paged``, a status)."""
PAGED = "paged"
SETTLED = {MessageStatus.SENT: EventType.NOTIFICATION_SENT,
           MessageStatus.DELIVERED: EventType.NOTIFICATION_DELIVERED,
           MessageStatus.FAILED: EventType.NOTIFICATION_FAILED}  # fmt: skip
MAX_REASON = 60
ATTEMPTS = 8
"""Tries of an event whose incident keeps changing under it."""


class AlreadyLoggedError(DomainError):
    """The source item is marked: its event was written (a record handled again)."""


def log_page(store: Store, image: Item) -> TimelineEvent | None:
    """The ``escalation.level`` event of a page (its item's new image), once."""
    page = deserialize(image)
    person = PagedPerson(
        user_id=page["user_id"],
        policy_id=page["policy_id"],
        policy_version=int(page["policy_version"]),
        rule_id=page["rule_id"],
        level=int(page["level"]),
        loop=int(page["loop"]),
        schedule_id=page.get("schedule_id"),
        schedule_version=page.get("schedule_version"),
    )
    actor = Caller(account_id=page["account_id"], user_id=page["policy_id"])
    return _log(store, actor, page, PAGED, EventType.ESCALATION_LEVEL, page=person)


def is_settled_notification(record: dict[str, Any]) -> bool:
    """Whether a stream record is a notification's change to sent, delivered or failed,
    not yet on the timeline (its own mark's change is not one)."""
    image = record.get("dynamodb", {}).get("NewImage", {})
    status = image.get("status", {}).get("S")
    logged = image.get(LOGGED, {}).get("SS", [])
    return (
        record.get("eventName") == "MODIFY"
        and image.get("Type", {}).get("S") == NOTIFICATION_TYPE
        and status in SETTLED
        and status not in logged
    )


def log_notification(store: Store, image: Item) -> TimelineEvent | None:
    """The event of a notification's status (its item's new image, settled), once."""
    values = deserialize(image)
    notification = Notification.model_validate(values)
    status = MessageStatus(notification.status)
    _, _, loop, level, _ = notification.page.split("#", 4)
    outcome = SentNotification(
        user_id=notification.user_id,
        contact_method_id=notification.contact_method_id,
        notification_rule_id=notification.rule_id,
        channel=notification.channel.value,
        level=int(level),
        loop=int(loop),
        attempts=notification.attempts,
        message_id=notification.message_id,
        reason=reason_kind(notification.reason) if status is MessageStatus.FAILED else None,
    )
    actor = Caller(account_id=notification.account_id,
                   user_id=notification.policy_id or notification.user_id)  # fmt: skip
    return _log(store, actor, values, status.value, SETTLED[status], notification=outcome)


def reason_kind(reason: str | None) -> str | None:
    """What kind of failure `reason` is (the words before its first colon: ``bounced``,
    ``MessageRejected``, ``spend_cap``): a provider's own words may name an address, and the
    timeline goes to everyone who reads the incident and to every webhook. The whole reason
    stays on the notification."""
    return None if reason is None else reason.split(":", 1)[0][:MAX_REASON]


def _log(
    store: Store, actor: Caller, source: dict[str, Any], mark: str, kind: EventType,
    **fields: Any,
) -> TimelineEvent | None:  # fmt: skip
    """`kind`'s event on the source's incident, with `source` marked `mark` in its
    transaction; None if it was marked already or the incident is gone."""
    for attempt in range(ATTEMPTS):
        counted = load_counted(store, actor, source["incident_id"])
        if counted is None:
            return None
        operations, event = change_operations(store, actor, counted, kind, **fields)
        marked = {
            "Update": {
                "TableName": store.table_name,
                "Key": item_key(source[PK], source[SK]),
                "UpdateExpression": "ADD #logged :marks",
                "ConditionExpression": f"attribute_exists({PK}) AND NOT contains(#logged, :mark)",
                "ExpressionAttributeNames": {"#logged": LOGGED},
                "ExpressionAttributeValues": {":marks": {"SS": [mark]}, ":mark": {"S": mark}},
            }
        }
        failures: list[DomainError | None] = [None] * len(operations)
        try:
            store.transact([*operations, marked], [*failures, AlreadyLoggedError()])
        except AlreadyLoggedError:
            return None
        except VersionConflictError:
            pause_before_retry(attempt)
            continue
        return event
    raise VersionConflictError("the incident keeps changing; its paging event waits for a retry")
