"""Timers of many accounts due together, and a handler that records each firing: what the
sweep's fairness test and its benchmark stand on (`tests/integration/test_timer_fairness.py`,
`bench.timer_fairness`).

`record_firing` fires a timer as every handler does, its claim in one transaction with
what firing writes: here one ``fired#`` item conditioned on not existing, so a timer fired
twice fails loudly instead of passing unseen, and the table itself says which fired.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from dynashard.query import Item
from incidents.store import Store
from incidents.table import PK, SK
from incidents.timers.schedule import Timer, TimerKind, claim, set_timer

WRITERS = 8
FIRED = "fired"


def account_timers(
    account: str, count: int, due: datetime, spread: timedelta = timedelta(0)
) -> Iterator[Timer]:
    """`count` timers of `account`, due from `due` over `spread`."""
    for n in range(count):
        step = spread * (n / count) if count else timedelta(0)
        yield Timer(account, TimerKind.HEARTBEAT, f"beat-{n:06d}", due + step)


def write_timers(store: Store, timers: Iterable[Timer]) -> int:
    """Set `timers` in batches (as their changes would have, without the changes)."""
    items = [set_timer(store, timer).request["Put"]["Item"] for timer in timers]
    batches = [items[start : start + 25] for start in range(0, len(items), 25)]
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(lambda batch: _write(store, batch), batches))
    return len(items)


def _write(store: Store, batch: list[Item]) -> None:
    pending: Any = {store.table_name: [{"PutRequest": {"Item": item}} for item in batch]}
    while pending:
        pending = store.client.batch_write_item(RequestItems=pending).get("UnprocessedItems")


def record_firing(
    on_fire: Callable[[Timer], None] = lambda timer: None,
) -> Callable[[Store, Timer], bool]:
    """A handler: the claim and a ``fired#`` item of the timer, in one transaction; False
    when the claim failed. `on_fire` sees each timer before it fires."""

    def fire(store: Store, timer: Timer) -> bool:
        on_fire(timer)
        record = {
            PK: {"S": f"{timer.account}#{FIRED}"},
            SK: {"S": f"{timer.subject}#{timer.due_at.isoformat()}"},
            "fired_at": {"S": store.clock().isoformat()},
        }
        items: Any = [
            claim(store, timer),
            {"Put": {"TableName": store.table_name, "Item": record,
                     "ConditionExpression": f"attribute_not_exists({PK})"}},
        ]  # fmt: skip
        try:
            store.client.transact_write_items(TransactItems=items)
        except store.client.exceptions.TransactionCanceledException as error:
            reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
            if reasons[0] == "ConditionalCheckFailed" and reasons[1] in ("None", None):
                return False  # moved or fired: the claim is gone
            raise
        return True

    return fire


def fired(store: Store, account: str) -> dict[str, datetime]:
    """Each fired timer of `account` (subject and due time) and when it fired."""
    found: dict[str, datetime] = {}
    pages = store.client.get_paginator("query").paginate(
        TableName=store.table_name,
        KeyConditionExpression=f"{PK} = :pk",
        ExpressionAttributeValues={":pk": {"S": f"{account}#{FIRED}"}},
        ConsistentRead=True,
    )
    for page in pages:
        for item in page["Items"]:
            found[item[SK]["S"]] = datetime.fromisoformat(item["fired_at"]["S"])
    return found
