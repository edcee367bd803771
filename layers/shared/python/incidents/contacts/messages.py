"""What a contact method is sent, as data for the delivery channels: a verification code's
message waits in its item, in the user's partition keyed by its method, until the delivery
path has sent it (`incidents.notifications.codes`) and records what became of it there.

That item holds the code in the clear, as a message to send must; it goes when the method
is verified, deleted or sent a newer code, and by TTL at the code's expiry (the method's
own record keeps only the code's digest).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from dynashard import build_key
from dynashard.query import Item
from incidents.contacts.models import Channel, ContactMethod
from incidents.contacts.verification import CODE_LIFETIME
from incidents.items import deserialize, serialize
from incidents.keys import user_partition
from incidents.models import parse_timestamp
from incidents.store import Store
from incidents.table import PK, SK, item_key

VERIFICATION = "verification"
MESSAGE_TYPE = "verification_message"
"""The pending message's item type (its insert, or a newer code's put over it, is sent)."""
MINUTES = int(CODE_LIFETIME.total_seconds() // 60)
SUBJECT = "Your verification code"
BODIES = {
    Channel.EMAIL: (
        "Your code to verify this address for paging is {code}. It expires in {minutes} "
        "minutes. If you did not add this address, ignore this message."
    ),
    Channel.SMS: "{code} is your code to verify this number for paging ({minutes} min).",
    Channel.VOICE: "Your verification code is {spoken}. Again: {spoken}.",
    Channel.SLACK: (
        "Your code to verify this Slack webhook for paging is {code}. It expires in "
        "{minutes} minutes."
    ),
}
"""Each channel's words: short for SMS, digit by digit for a voice to read out."""


class MessageStatus(StrEnum):
    """What became of a message to a contact method, recorded on its item by the delivery
    path and by its provider's receipt (GoAlert's message states)."""

    PENDING = "pending"
    SENT = "sent"
    DELIVERED = "delivered"
    """A receipt said so (best effort: a message sent may never get one)."""
    FAILED = "failed"


@dataclass(frozen=True)
class OutgoingMessage:
    """One message for one contact method, whatever carries it."""

    account_id: str
    channel: Channel
    to: str
    """The method's address: an email address, an E.164 number, a webhook's URL."""
    subject: str | None
    """Email's subject line (None on the other channels)."""
    body: str
    user_id: str
    contact_method_id: str
    expires_at: str
    """When it is no use sending any more (a code's expiry)."""
    purpose: str = VERIFICATION


def verification_message(
    account: str, user_id: str, method: ContactMethod, code: str, expires_at: str
) -> OutgoingMessage:
    """The message that carries `code` to `method`."""
    channel = method.type.channel
    body = BODIES[channel].format(code=code, minutes=MINUTES, spoken=", ".join(code))
    return OutgoingMessage(
        account_id=account,
        channel=channel,
        to=method.address,
        subject=SUBJECT if channel is Channel.EMAIL else None,
        body=body,
        user_id=user_id,
        contact_method_id=method.id,
        expires_at=expires_at,
    )


def message_key(account: str, user_id: str, method_id: str) -> tuple[str, str]:
    """(PK, SK) of a method's pending verification message: ``verification#<cm id>``
    in ``<acct>#<user>`` (never under the ``cm_`` prefix a method list reads)."""
    return user_partition(account, user_id), build_key(VERIFICATION, method_id, kind="sort")


def message_item(message: OutgoingMessage) -> Item:
    """The pending message, as the delivery path reads and records on it, removed by TTL
    once its code has expired."""
    pk, sk = message_key(message.account_id, message.user_id, message.contact_method_id)
    expires = int(parse_timestamp(message.expires_at).timestamp())
    return serialize({
        **asdict(message), "Type": MESSAGE_TYPE, PK: pk, SK: sk, "ExpiresAt": expires,
        "status": MessageStatus.PENDING.value, "attempts": 0,
    })  # fmt: skip


def discard_message(store: Store, account: str, user_id: str, method_id: str) -> Item:
    """A transaction's Delete of the method's pending message, if there is one."""
    key = item_key(*message_key(account, user_id, method_id))
    return {"Delete": {"TableName": store.table_name, "Key": key}}


def pending_verification_message(
    store: Store, account: str, user_id: str, method_id: str
) -> OutgoingMessage | None:
    """The method's code message, if its code still holds."""
    item = store.get(*message_key(account, user_id, method_id))
    if item is None:
        return None
    message = stored_message(deserialize(item))
    if store.clock() >= parse_timestamp(message.expires_at):
        return None
    return message


def stored_message(values: dict[str, Any]) -> OutgoingMessage:
    """The message a pending message's item (deserialized) holds."""
    return OutgoingMessage(
        account_id=values["account_id"],
        channel=Channel(values["channel"]),
        to=values["to"],
        subject=values.get("subject"),
        body=values["body"],
        user_id=values["user_id"],
        contact_method_id=values["contact_method_id"],
        expires_at=values["expires_at"],
        purpose=values["purpose"],
    )
