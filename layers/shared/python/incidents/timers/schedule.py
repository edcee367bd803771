"""Timers: one item per kind and subject, set, moved and cleared in the transaction of the
change that decides its due time, and listed by due minute for the sweep.

A timer's item sits with its account (``<acct>#timer``); GSI3 lists it under its due
minute's bucket, ``schedule#due#<minute>``, sharded because "everything due this minute" is
one key however many accounts it spans. The buckets' shard count is one `dynashard` count
(`schedule_meta`) that grows when a write to a bucket is throttled, as every other family's
does; a timer moved to another minute leaves its old bucket with it (the index follows the
item). Firing a timer claims it with a write conditioned on the due time the sweep read
(`claim`), in the transaction of what firing does, so a timer moved or fired meanwhile is
not fired again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from dynashard.query import Item
from dynashard.resharding import Operation, ShardedKey, Transaction
from incidents.errors import DomainError
from incidents.items import deserialize, serialize
from incidents.keys import due_index_key, schedule_meta, timer_key
from incidents.models import timestamp
from incidents.store import Failure, Store, labelled
from incidents.table import GSI3, PK, SK, item_key


class TimerKind(StrEnum):
    """What comes due."""

    HEARTBEAT = "heartbeat"
    """A heartbeat's next ping is late: it expires."""
    AUTO_RESOLVE = "auto_resolve"
    """An incident an integration opened had no alert for its ``auto_resolve_timeout``."""
    ACKNOWLEDGEMENT = "acknowledgement"
    """An incident an integration opened stayed acknowledged for its
    ``acknowledgement_timeout``: it returns to triggered."""
    MAINTENANCE_END = "maintenance_end"
    """A maintenance window with ``resolve_on_end`` ended: its suppressed alerts still
    triggered are resolved."""
    NOTIFICATION = "notification"
    """A notification rule's start delay after its page has passed: its notification is
    decided, unless the incident was acknowledged, resolved or triggered again meanwhile."""
    HANDOFF = "handoff"
    """A schedule's current shift ended: who is on call now and next is worked out again."""
    ESCALATION = "escalation"
    """A triggered incident's escalation has something due: a level to page, or the next
    level after the current one waited its delay."""


class TimerMovedError(DomainError):
    """A timer's claim failed: it was moved or fired since the sweep read it (a handler
    answers False: the sweep counts it as lost, never as an error)."""


@dataclass(frozen=True)
class Timer:
    """A time that comes due for one subject of one account."""

    account: str
    kind: TimerKind
    subject: str
    due_at: datetime

    @property
    def minute(self) -> str:
        """The due minute's bucket name, ``YYYYMMDDHHMM`` (UTC)."""
        return minute_of(self.due_at)

    @property
    def identity(self) -> str:
        """What names the timer across accounts: ``<acct>#<kind>#<subject>``."""
        return f"{self.account}#{self.kind.value}#{self.subject}"


def minute_of(moment: datetime) -> str:
    """A moment's minute bucket, ``YYYYMMDDHHMM`` in UTC."""
    return moment.astimezone(UTC).strftime("%Y%m%d%H%M")


def set_timer(store: Store, timer: Timer) -> Operation[Failure]:
    """The Put that sets `timer` (or moves it: one timer per kind and subject), with the
    bucket shard count it was derived from, which grows if the bucket is throttled."""
    count = store.due.get(schedule_meta()).shard_count
    pk, sk = timer_key(timer.account, timer.kind.value, timer.subject)
    gsi_pk, gsi_sk = due_index_key(timer.minute, timestamp(timer.due_at), timer.identity, count)
    item = {
        PK: pk,
        SK: sk,
        "Type": "timer",
        GSI3.partition_key: gsi_pk,
        GSI3.sort_key: gsi_sk,
        "account": timer.account,
        "kind": timer.kind.value,
        "subject": timer.subject,
        "due_at": timestamp(timer.due_at),
    }
    put = {"Put": {"TableName": store.table_name, "Item": serialize(item)}}
    return labelled(put, None, (ShardedKey(store.due, schedule_meta()),))


def clear_timer(store: Store, account: str, kind: TimerKind, subject: str) -> Item:
    """The Delete that clears a timer (whether it is set or not)."""
    pk, sk = timer_key(account, kind.value, subject)
    return {"Delete": {"TableName": store.table_name, "Key": item_key(pk, sk)}}


def claim(store: Store, timer: Timer) -> Item:
    """The Delete that fires `timer`: only while it is still due when the sweep read it
    (neither moved nor fired meanwhile); in the transaction of what firing does."""
    pk, sk = timer_key(timer.account, timer.kind.value, timer.subject)
    return {
        "Delete": {
            "TableName": store.table_name,
            "Key": item_key(pk, sk),
            "ConditionExpression": "due_at = :due",
            "ExpressionAttributeValues": {":due": {"S": timestamp(timer.due_at)}},
        }
    }


def claim_alone(store: Store, timer: Timer) -> bool:
    """Fire `timer` doing nothing else (what it was for is gone or stopped); False if the
    claim failed (it moved or fired meanwhile)."""
    moved = TimerMovedError("the timer moved")
    try:
        store.transact_growing(lambda: Transaction([labelled(claim(store, timer), moved)], None))
    except TimerMovedError:
        return False
    return True


def refire(store: Store, fired: Timer, due_at: datetime, failure: Failure) -> Operation[Failure]:
    """The Put that fires `fired` and sets it again, due at `due_at`: a claim and a set in
    one (a transaction touches an item once), only while it is as the sweep read it."""
    operation = set_timer(store, replace(fired, due_at=due_at))
    put = operation.request["Put"]
    put["ConditionExpression"] = "due_at = :due"
    put["ExpressionAttributeValues"] = {":due": {"S": timestamp(fired.due_at)}}
    return labelled(operation.request, failure, operation.sharded)


def timer_from_item(item: Item) -> Timer:
    """A timer as the due index lists it."""
    values: dict[str, Any] = deserialize(item)
    return Timer(
        account=values["account"],
        kind=TimerKind(values["kind"]),
        subject=values["subject"],
        due_at=datetime.fromisoformat(values["due_at"]),
    )
