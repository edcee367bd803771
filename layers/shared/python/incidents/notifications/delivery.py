"""Sending one notification: read it, hand its message to its channel's provider once, and
record what became of it on its item, conditioned on it still being ``pending`` (a
redelivered message finds it sent and does nothing). What a provider may take again is
tried again, `ATTEMPTS` times in all within about four minutes (`RETRY_SECONDS`), then
the notification is ``failed``; a refusal for good fails it at once. A failed notification
never counts as delivered: only an acknowledge stops the escalation, whose next level is
paged anyway."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from incidents.events_out.delivery_messages import NotificationJob
from incidents.items import from_item, serialize
from incidents.models import parse_timestamp, timestamp
from incidents.notifications.channels import Carriers, Handed
from incidents.notifications.decisions import Notification, NotificationStatus
from incidents.notifications.messages import page_message
from incidents.store import Store, condition_failed
from incidents.table import item_key

ATTEMPTS = 5
RETRY_SECONDS = (10, 30, 60, 120)
"""The wait after each failed attempt but the last (at least what the provider asked)."""


@dataclass(frozen=True)
class Outcome:
    """What one try of a notification came to."""

    status: NotificationStatus | None
    """Its status after this try (None: it is gone, or was settled before)."""
    retry_in: int | None = None
    """Seconds until its next attempt, if there is one."""


def deliver(store: Store, carriers: Carriers, job: NotificationJob) -> Outcome:
    """One attempt at `job`'s notification, unless it is settled or gone."""
    key = (job.account_id, job.incident_id, job.notification)
    found = store.get(*_key(*key))
    if found is None:
        return Outcome(None)
    notification = from_item(Notification, found)
    if notification.status is not NotificationStatus.PENDING:
        return Outcome(None)
    message = page_message(store, notification)
    carrier = carriers.get(notification.channel)
    if store.clock() >= parse_timestamp(message.expires_at):
        handed = Handed(reason="stale: not sent before its page's level had passed")
    elif carrier is None:
        handed = Handed(reason=f"no provider for {notification.channel.value} on this stage")
    else:
        handed = carrier.hand(message)
    attempts = notification.attempts + 1
    if handed.sent:
        changes: dict[str, Any] = {"status": NotificationStatus.SENT.value,
                                   "sent_at": timestamp(store.clock()),
                                   "message_id": handed.message_id}  # fmt: skip
        return _recorded(store, key, attempts, changes, Outcome(NotificationStatus.SENT))
    if handed.retry_after is not None and attempts < ATTEMPTS:
        wait = max(handed.retry_after, RETRY_SECONDS[attempts - 1])
        outcome = Outcome(NotificationStatus.PENDING, retry_in=wait)
        return _recorded(store, key, attempts, {"reason": handed.reason}, outcome)
    failed = {"status": NotificationStatus.FAILED.value, "reason": handed.reason}
    return _recorded(store, key, attempts, failed, Outcome(NotificationStatus.FAILED))


def _key(account: str, incident_id: str, sort_key: str) -> tuple[str, str]:
    pk, _ = Notification.partition(account, incident_id)
    return pk, sort_key


def _recorded(
    store: Store,
    key: tuple[str, str, str],
    attempts: int,
    changes: dict[str, Any],
    outcome: Outcome,
) -> Outcome:
    """`changes` and the attempt's count on the item, if it is still pending and at the
    count read (another worker that settled it first wins: `Outcome(None)`)."""
    values = {k: v for k, v in {**changes, "attempts": attempts}.items() if v is not None}
    names = {f"#f{n}": name for n, name in enumerate(values)}
    placeholders = {f":f{n}": value for n, value in enumerate(values.values())}
    try:
        store.client.update_item(
            TableName=store.table_name,
            Key=item_key(*_key(*key)),
            UpdateExpression="SET " + ", ".join(f"#f{n} = :f{n}" for n in range(len(values))),
            ConditionExpression="#status = :pending AND #attempts = :read",
            ExpressionAttributeNames={**names, "#status": "status", "#attempts": "attempts"},
            ExpressionAttributeValues=serialize({
                **placeholders, ":pending": NotificationStatus.PENDING.value,
                ":read": attempts - 1,
            }),
        )  # fmt: skip
    except ClientError as error:
        if not condition_failed(error):
            raise
        return Outcome(None)
    return outcome
