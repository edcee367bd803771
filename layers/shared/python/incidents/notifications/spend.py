"""Each account's monthly spend on texts and calls, capped. Before End User Messaging is
called, the most the message can cost (the ``MaxPrice`` AWS is told, times the text's parts
or the call's minutes) is reserved by one conditional ``ADD`` on the account's counter of
the month, so the month's sends never pass the cap however many workers send at once;
a send AWS does not take gives its reservation back. Amounts are kept in micro-dollars
(whole numbers: no rounding in the table)."""

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
"""The most a text's part, or a call's minute, may cost (AWS refuses a dearer send): about
twice the dearest US and EU rates, so it reserves at least what AWS charges."""
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
    return 1 if len(body) <= 70 else math.ceil(len(body) / 67)


def minutes(body: str) -> int:
    """The minutes a call reading `body` is billed as (each started minute)."""
    return max(1, math.ceil(len(body.split()) / WORDS_A_MINUTE))


def most_it_costs(channel: Channel, body: str) -> Decimal:
    """What a text or call of `body` costs at most (its `MAX_PRICE` per unit)."""
    units = parts(body) if channel is Channel.SMS else minutes(body)
    return MAX_PRICE[channel] * units


@dataclass(frozen=True)
class SpendCap:
    """One channel's monthly cap for every account, in dollars."""

    store: Store
    channel: Channel
    cap: Decimal

    def reserve(self, account: str, cost: Decimal) -> bool:
        """`cost` taken from the account's month, if it fits under the cap."""
        amount = int(cost * MICROS)
        room = int(self.cap * MICROS) - amount
        try:
            self.store.client.update_item(
                **self._adding(account, {":amount": amount, ":room": room}),
                ConditionExpression="attribute_not_exists(#spent) OR #spent <= :room",
            )
        except ClientError as error:
            if not condition_failed(error):
                raise
            return False
        return True

    def give_back(self, account: str, cost: Decimal) -> None:
        """A reservation not spent (AWS did not take the message)."""
        self.store.client.update_item(**self._adding(account, {":amount": -int(cost * MICROS)}))

    def _adding(self, account: str, values: dict[str, int]) -> dict[str, Any]:
        return {
            "TableName": self.store.table_name,
            "Key": item_key(*self.key(account, self.store.clock())),
            "UpdateExpression": "ADD #spent :amount",
            "ExpressionAttributeNames": {"#spent": "spent_micros"},
            "ExpressionAttributeValues": serialize(values),
        }

    def key(self, account: str, now: datetime) -> tuple[str, str]:
        """(PK, SK) of the account's counter of this channel and month (UTC)."""
        return build_key(account, "spend"), f"{self.channel.value}#{now:%Y-%m}"
