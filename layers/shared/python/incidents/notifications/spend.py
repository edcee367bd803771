"""Each account's monthly budget for texts and calls. Before End User Messaging is called,
the most the message may cost (the text's ``MaxPrice`` AWS is told; a call's price a
minute times the minutes its words take) is reserved by one conditional ``ADD`` on the
account's counter of the month, so the month's reservations never pass the cap however
many workers send at once. The budget counts these ceilings, not AWS's charges (those come
with receipts). A send AWS refused gives its reservation back; one whose fate is unknown
(no answer, AWS's own failure) keeps it, since AWS may have sent it. Amounts are kept in
micro-dollars (whole numbers: no rounding in the table)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from dynashard import build_key
from incidents.contacts.models import Channel
from incidents.items import serialize
from incidents.store import Store, condition_failed
from incidents.table import item_key

MICROS = Decimal(1_000_000)
MAX_PRICE = {Channel.SMS: Decimal("0.25"), Channel.VOICE: Decimal("0.25")}
"""The most a text's part, or a call's minute, may cost: AWS refuses a text dearer than its
parts at this price, and a call dearer a minute."""
GSM_7 = (
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ ÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    "ÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
GSM_7_EXTENSION = "^{}\\[~]|€"
"""GSM 03.38's basic set, and its extension's characters (two septets each): a text of only
these is sent in parts of 160 septets (153 each when split); any other character makes it
UCS-2, 70 characters a part (67)."""
WORDS_A_MINUTE = 150
"""About how fast a call reads its text aloud."""


def parts(body: str) -> int:
    """The message parts a text is billed and throttled as."""
    if all(c in GSM_7 or c in GSM_7_EXTENSION for c in body):
        septets = len(body) + sum(c in GSM_7_EXTENSION for c in body)
        return 1 if septets <= 160 else math.ceil(septets / 153)
    units = len(body.encode("utf-16-le")) // 2  # an emoji is two
    return 1 if units <= 70 else math.ceil(units / 67)


def minutes(body: str) -> int:
    """The minutes a call reading `body` is billed as (each started minute)."""
    return max(1, math.ceil(len(body.split()) / WORDS_A_MINUTE))


def most_it_costs(channel: Channel, body: str) -> Decimal:
    """What a text or call of `body` costs at most (its `MAX_PRICE` per unit)."""
    units = parts(body) if channel is Channel.SMS else minutes(body)
    return MAX_PRICE[channel] * units


@dataclass(frozen=True)
class Reservation:
    """Money reserved on one account's counter of one month."""

    key: tuple[str, str]
    micros: int


@dataclass(frozen=True)
class SpendCap:
    """One channel's monthly cap for every account, in dollars."""

    store: Store
    channel: Channel
    cap: Decimal

    def reserve(self, account: str, cost: Decimal) -> Reservation | None:
        """`cost` taken from the account's month, if it fits under the cap."""
        amount, cap = int(cost * MICROS), int(self.cap * MICROS)
        if amount > cap:
            return None
        reservation = Reservation(self.key(account, self.store.clock()), amount)
        try:
            self.store.client.update_item(
                **self._adding(reservation.key, amount, {":room": cap - amount}),
                ConditionExpression="attribute_not_exists(#spent) OR #spent <= :room",
            )
        except ClientError as error:
            if not condition_failed(error):
                raise
            return None
        return reservation

    def give_back(self, reservation: Reservation) -> None:
        """A reservation not spent (AWS refused the message), on the month it was taken."""
        self.store.client.update_item(**self._adding(reservation.key, -reservation.micros, {}))

    def _adding(self, key: tuple[str, str], amount: int, more: dict[str, int]) -> dict[str, Any]:
        return {
            "TableName": self.store.table_name,
            "Key": item_key(*key),
            "UpdateExpression": "ADD #spent :amount",
            "ExpressionAttributeNames": {"#spent": "spent_micros"},
            "ExpressionAttributeValues": serialize({":amount": amount, **more}),
        }

    def key(self, account: str, now: datetime) -> tuple[str, str]:
        """(PK, SK) of the account's counter of this channel and month (UTC)."""
        return build_key(account, "spend"), f"{self.channel.value}#{now:%Y-%m}"
