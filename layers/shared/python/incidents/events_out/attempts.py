"""How many attempts one event's delivery to one webhook has had, and when the next is due:
kept by the project in the table, not read from the queue.

SQS's ``ApproximateReceiveCount`` counts receives, not attempts: the messages of a group
waiting behind a failing head are received with it and released untried, and a wait longer
than SQS allows from one receive (12 hours, the attempt's own time counted) comes back
early to be hidden again. Neither is an attempt; the count and the due time here are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from incidents.events_out.delivery_messages import DeliveryMessage
from incidents.keys import attempts_key
from incidents.store import Store
from incidents.table import item_key

KEPT_DAYS = 30
"""As long as the delivery log: the table's TTL removes the count once a delivery is over
(left in place, not deleted: a write saved per delivery)."""
EARLY_SECONDS = 1.0
"""A message back less than this before its due time is attempted (clock skew)."""


@dataclass(frozen=True)
class Attempts:
    """The attempts made so far and the instant (epoch seconds) the next one is due."""

    made: int = 0
    due_at: float = 0.0

    def wait_from(self, now: datetime) -> int | None:
        """Seconds until the next attempt is due, None if it is due now."""
        left = self.due_at - now.timestamp()
        return math.ceil(left) if left > EARLY_SECONDS else None


def load_attempts(store: Store, message: DeliveryMessage) -> Attempts:
    """What the delivery of `message` has had (strongly consistent; none yet: zero)."""
    item = store.get(*attempts_key(message.account_id, message.webhook_id, message.event_id))
    if item is None:
        return Attempts()
    return Attempts(int(item["made"]["N"]), float(item["due_at"]["N"]))


def save_attempts(store: Store, message: DeliveryMessage, made: int, due_at: datetime) -> None:
    """`made` attempts so far, the next due at `due_at`."""
    pk, sk = attempts_key(message.account_id, message.webhook_id, message.event_id)
    expires = int((store.clock() + timedelta(days=KEPT_DAYS)).timestamp())
    store.client.put_item(
        TableName=store.table_name,
        Item={
            **item_key(pk, sk), "Type": {"S": "attempts"},
            "made": {"N": str(made)}, "due_at": {"N": f"{due_at.timestamp():.3f}"},
            "ExpiresAt": {"N": str(expires)},
        },
    )  # fmt: skip
