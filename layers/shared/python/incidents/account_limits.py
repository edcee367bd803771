"""Per-account limits on what an account keeps: heartbeats, maintenance windows not yet
ended, schedules and escalation policies (each a stage setting,
`lambdas.settings.account_limits`).

Each bounds one account's share of the table and of the timers' sweep: a heartbeat, a
``resolve_on_end`` window and a schedule each hold at most one pending timer. Heartbeats,
schedules and escalation policies are counted by one item per account and subject, moved by
`count_move` in the transaction of each create (only below the limit) and each delete, so
concurrent creates at the limit never pass it and a delete frees a place at once. Windows
are counted by their live set, which ends by the clock (`incidents.maintenance.commands`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from dynashard.query import Item
from dynashard.resharding import Operation
from incidents.errors import DomainError, VersionConflictError
from incidents.keys import account_count_key
from incidents.table import item_key

if TYPE_CHECKING:
    from incidents.store import Failure, Store


T = TypeVar("T")
CONFLICT_PAUSE_SECONDS = 0.02


class LimitReachedError(DomainError):
    """The account holds as many of something as its limit allows: one must go first."""

    code = "limit_reached"


class Limited(StrEnum):
    """What an account holds a limited number of (the `AccountLimits` field of each)."""

    HEARTBEATS = "heartbeats"
    MAINTENANCE_WINDOWS = "maintenance_windows"
    SCHEDULES = "schedules"
    ESCALATION_POLICIES = "escalation_policies"

    @property
    def noun(self) -> str:
        """What the limit counts, as its message says it."""
        return WORDING[self][0]

    def reached(self, limit: int) -> LimitReachedError:
        """The 409 that names the limit and its value, and what frees a place."""
        noun, frees = WORDING[self]
        return LimitReachedError(f"an account holds at most {limit:,} {noun}; {frees} first")


WORDING = {
    Limited.HEARTBEATS: ("heartbeats", "delete one"),
    Limited.MAINTENANCE_WINDOWS: ("maintenance windows not yet ended", "end or delete one"),
    Limited.SCHEDULES: ("schedules", "delete one"),
    Limited.ESCALATION_POLICIES: ("escalation policies", "delete one"),
}


MAX_MAINTENANCE_WINDOWS = 1000
"""A stage's highest windows limit: every alert reads the live set in one Query, whose
1 MB page holds about 4,000 entries of 255 bytes; 1,000 costs an alert 64 read units."""


@dataclass(frozen=True)
class AccountLimits:
    """The stage's limits, each what one account may hold at once."""

    heartbeats: int = 1000
    maintenance_windows: int = 50
    """Low by default: every alert reads them all (a read unit for about sixteen)."""
    schedules: int = 1000
    escalation_policies: int = 1000

    def of(self, subject: Limited) -> int:
        """The limit on `subject`."""
        limit: int = getattr(self, subject.value)
        return limit


COUNT_TRIES = 3
"""Tries of a transaction that moves an account's count: two that write the count item at
the same instant are cancelled against each other on DynamoDB (``TransactionConflict``), a
collision, not a refusal."""


def counted(run: Callable[[], T]) -> T:
    """`run` (a transaction moving a count), tried again after a short random pause when a
    concurrent one conflicted with it; a conflict on the last try is the caller's 409."""
    for attempt in range(COUNT_TRIES - 1):
        try:
            return run()
        except VersionConflictError:
            time.sleep(random.uniform(0, CONFLICT_PAUSE_SECONDS * 2**attempt))
    return run()


def count_move(store: Store, account: str, subject: Limited, change: int) -> Operation[Failure]:
    """The transaction's Update of the account's count of `subject` by `change` (+1: only
    below its limit, else `LimitReachedError`; -1: on a delete)."""
    limit = store.limits.of(subject)
    key = item_key(*account_count_key(account, subject.value))
    update = count_update(store.table_name, key, "count", change, limit)
    return Operation(update, subject.reached(limit) if change > 0 else None)


def count_update(table: str, key: Item, attribute: str, change: int, limit: int) -> Item:
    """A transaction's Update moving the count `attribute` of the item `key` (made by the
    first create) by `change`: an increase only while the count is below `limit`; a
    decrease always, so a delete is never refused over its count (what was made before the
    counts existed was never counted: such a delete leaves the count low, never stuck)."""
    update: dict[str, Any] = {
        "TableName": table,
        "Key": key,
        "UpdateExpression": "SET #n = if_not_exists(#n, :zero) + :change",
        "ExpressionAttributeNames": {"#n": attribute},
        "ExpressionAttributeValues": {":zero": {"N": "0"}, ":change": {"N": str(change)}},
    }
    if change > 0:
        update["ConditionExpression"] = "attribute_not_exists(#n) OR #n < :max"
        update["ExpressionAttributeValues"][":max"] = {"N": str(limit)}
    return {"Update": update}
