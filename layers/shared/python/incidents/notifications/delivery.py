"""Sending one message (a page's notification, or a verification code: `codes`): read it,
hand it to its channel's provider once, and record what became of it on its item,
conditioned on it still being ``pending`` (a redelivered message finds it sent and does
nothing). What a provider may take again is
tried again, `ATTEMPTS` times in all within about four minutes (`RETRY_SECONDS`), then
the notification is ``failed``; a refusal for good fails it at once. A failed notification
never counts as delivered: only an acknowledge stops the escalation, whose next level is
paged anyway."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from incidents.contacts.messages import MessageStatus, OutgoingMessage
from incidents.events_out.delivery_messages import NotificationJob
from incidents.items import from_item, serialize
from incidents.keys import receipt_index_key
from incidents.models import parse_timestamp, timestamp
from incidents.notifications.channels import Carriers, Handed
from incidents.notifications.decisions import Notification
from incidents.notifications.links import Links
from incidents.notifications.messages import page_message
from incidents.store import Store, condition_failed
from incidents.table import GSI3, item_key

ATTEMPTS = 5
RETRY_SECONDS = (10, 30, 60, 120)
"""The wait after each failed attempt but the last (at least what the provider asked)."""


@dataclass(frozen=True)
class Outcome:
    """What one try of a message came to."""

    status: MessageStatus | None
    """Its status after this try (None: it is gone, or was settled before)."""
    retry_in: int | None = None
    """Seconds until its next attempt, if there is one."""


def deliver(
    store: Store, carriers: Carriers, job: NotificationJob, links: Links | None = None
) -> Outcome:
    """One attempt at `job`'s notification, unless it is settled or gone; its message
    carries its link where `links` are made (the stage knows its API's URL)."""
    key = _key(job.account_id, job.incident_id, job.notification)
    found = store.get(*key)
    if found is None:
        return Outcome(None)
    notification = from_item(Notification, found)
    if notification.status is not MessageStatus.PENDING:
        return Outcome(None)
    pending = PendingItem(store, key, notification.attempts)
    link = links.issue(store, notification) if links is not None else None
    return attempt(carriers, page_message(store, notification, link), pending)


def attempt(carriers: Carriers, message: OutgoingMessage, pending: PendingItem) -> Outcome:
    """One try of `message`, and what came of it recorded on its `pending` item."""
    carrier = carriers.get(message.channel)
    if pending.store.clock() >= parse_timestamp(message.expires_at):
        handed = Handed(reason=f"stale: not sent before {message.expires_at}, when it expired")
    elif carrier is None:
        handed = Handed(reason=f"no provider for {message.channel.value} on this stage")
    else:
        handed = carrier.hand(message)
    if handed.sent:
        changes: dict[str, Any] = {"status": MessageStatus.SENT.value,
                                   "sent_at": timestamp(pending.store.clock()),
                                   "message_id": handed.message_id}  # fmt: skip
        if handed.message_id is not None:  # where its provider's receipt finds it
            pk, sk = receipt_index_key(handed.message_id)
            changes |= {GSI3.partition_key: pk, GSI3.sort_key: sk}
        return pending.recorded(changes, Outcome(MessageStatus.SENT))
    tries = pending.attempts + 1
    if handed.retry_after is not None and tries < ATTEMPTS:
        wait = max(handed.retry_after, RETRY_SECONDS[tries - 1])
        return pending.recorded({"reason": handed.reason}, Outcome(MessageStatus.PENDING, wait))
    failed = {"status": MessageStatus.FAILED.value, "reason": handed.reason}
    return pending.recorded(failed, Outcome(MessageStatus.FAILED))


def _key(account: str, incident_id: str, sort_key: str) -> tuple[str, str]:
    pk, _ = Notification.partition(account, incident_id)
    return pk, sort_key


@dataclass(frozen=True)
class PendingItem:
    """A message's item as read, pending: where it is, its tries so far, and what else it
    was read as (`expected`: which code, for a code's message)."""

    store: Store
    key: tuple[str, str]
    attempts: int
    expected: Mapping[str, str] = field(default_factory=dict)

    def recorded(self, changes: dict[str, Any], outcome: Outcome) -> Outcome:
        """`changes` and one more try on the item, if it is still as read (another worker
        that settled it first, or a newer message in its place, wins: `Outcome(None)`)."""
        tried = {**changes, "attempts": self.attempts + 1}
        read = {"status": MessageStatus.PENDING.value, "attempts": self.attempts,
                **self.expected}  # fmt: skip
        return outcome if set_if_still(self.store, self.key, tried, read) else Outcome(None)


def set_if_still(
    store: Store, key: tuple[str, str], changes: Mapping[str, Any], read: Mapping[str, Any]
) -> bool:
    """`changes` (but those None) set on a message's item if its `read` attributes still
    have the values read; False if another write moved them first."""
    values = {k: v for k, v in changes.items() if v is not None}
    names = {f"#f{n}": name for n, name in enumerate(values)}
    placeholders = {f":f{n}": value for n, value in enumerate(values.values())}
    try:
        store.client.update_item(
            TableName=store.table_name,
            Key=item_key(*key),
            UpdateExpression="SET " + ", ".join(f"#f{n} = :f{n}" for n in range(len(values))),
            ConditionExpression=" AND ".join(f"#r{n} = :r{n}" for n in range(len(read))),
            ExpressionAttributeNames={**names, **{f"#r{n}": name for n, name in enumerate(read)}},
            ExpressionAttributeValues=serialize(
                {**placeholders, **{f":r{n}": value for n, value in enumerate(read.values())}}
            ),
        )
    except ClientError as error:
        if not condition_failed(error):
            raise
        return False
    return True
