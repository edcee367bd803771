"""Providers' receipts: what became of a message after its provider took it, as SES
(through the configuration set's EventBridge destination) and End User Messaging (its
events on the default bus) report it, recorded on the message's item: ``delivered``, or
``failed`` with the reason (a bounce, a carrier's block, a call nobody answered). The
stream then puts it on the incident's timeline (`notifications.logged`).

Receipts are best effort and may come late (a carrier's, up to 72 hours) or never: they
change no escalation (only an acknowledge stops one). A message is found by its provider's
id (GSI3, written when it was sent); a receipt for a message of another sender on the same
bus, or one not settled as sent, changes nothing. Each status moves once, from ``sent``:
a receipt delivered twice, or after another final one, is a conditional write that fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from incidents.contacts.messages import MessageStatus
from incidents.keys import receipt_index_key
from incidents.models import timestamp
from incidents.notifications.delivery import set_if_still
from incidents.store import Store
from incidents.table import GSI3, PK, SK

EMAIL_DETAIL_TYPES = {
    "Email Delivered": MessageStatus.DELIVERED,
    "Email Bounced": MessageStatus.FAILED,
    "Email Rejected": MessageStatus.FAILED,
    "Email Rendering Failed": MessageStatus.FAILED,
}
"""SES's events on EventBridge (its detail type) and the status each means; a complaint
(after delivery) and a delay change nothing."""
PHONE_DETAIL_TYPES = (
    "Text Message Delivery Status Updated",
    "Voice Message Delivery Status Updated",
)
PHONE_EVENTS = {
    **dict.fromkeys(("TEXT_DELIVERED", "TEXT_SUCCESSFUL", "VOICE_ANSWERED", "VOICE_COMPLETED"),
                    MessageStatus.DELIVERED),
    **dict.fromkeys(("TEXT_BLOCKED", "TEXT_TTL_EXPIRED", "TEXT_INVALID", "TEXT_INVALID_MESSAGE",
                     "TEXT_CARRIER_BLOCKED", "TEXT_SPAM", "TEXT_UNREACHABLE",
                     "TEXT_PROTECT_BLOCKED", "VOICE_BUSY", "VOICE_NO_ANSWER", "VOICE_FAILED",
                     "VOICE_TTL_EXPIRED"), MessageStatus.FAILED),
}  # fmt: skip
"""End User Messaging's event types and the status each means; the others (queued,
pending, ringing, and an unknown or a carrier unreachable that is not final) wait for a
final one."""
FINAL_FAILURES = ("TEXT_UNKNOWN", "TEXT_CARRIER_UNREACHABLE")
"""Event types that are a failure only when the event says it is final."""
SOURCES = {"aws.ses": tuple(EMAIL_DETAIL_TYPES), "aws.sms-voice": PHONE_DETAIL_TYPES}
"""The events a receipt can be (the stack's rule matches exactly these)."""


@dataclass(frozen=True)
class Receipt:
    """A provider's word on one message."""

    message_id: str
    status: MessageStatus
    reason: str | None = None


def receipt_of(event: dict[str, Any]) -> Receipt | None:
    """The receipt an EventBridge event carries; None for one that says nothing final."""
    detail = event.get("detail") or {}
    kind = event.get("detail-type")
    if event.get("source") == "aws.ses" and kind in EMAIL_DETAIL_TYPES:
        return _email(detail, EMAIL_DETAIL_TYPES[kind])
    if event.get("source") == "aws.sms-voice" and kind in PHONE_DETAIL_TYPES:
        return _phone(detail)
    return None


def _email(detail: dict[str, Any], status: MessageStatus) -> Receipt | None:
    message_id = (detail.get("mail") or {}).get("messageId")
    if not isinstance(message_id, str):
        return None
    bounce = detail.get("bounce") or {}  # a soft one too: SES publishes it once it gave up
    reason = None
    if "bounce" in detail:
        reason = f"bounced: {bounce.get('bounceType')}/{bounce.get('bounceSubType')}"
    elif "reject" in detail:
        reason = f"rejected: {(detail.get('reject') or {}).get('reason')}"
    elif "failure" in detail:
        reason = f"rendering failed: {(detail.get('failure') or {}).get('errorMessage')}"
    return Receipt(message_id, status, reason if status is MessageStatus.FAILED else None)


def _phone(detail: dict[str, Any]) -> Receipt | None:
    message_id, kind = detail.get("messageId"), detail.get("eventType")
    if not isinstance(message_id, str) or not isinstance(kind, str):
        return None
    status = PHONE_EVENTS.get(kind)
    if status is None and kind in FINAL_FAILURES and detail.get("isFinal") is True:
        status = MessageStatus.FAILED
    if status is None:
        return None
    said = detail.get("messageStatusDescription")
    reason = f"{kind}: {said}" if said else kind
    return Receipt(message_id, status, reason if status is MessageStatus.FAILED else None)


def record_receipt(store: Store, receipt: Receipt) -> bool:
    """`receipt` on its message's item, if the message is ours and still ``sent``; whether
    it changed it (a Query of GSI3, then one conditional Update)."""
    pk, sk = receipt_index_key(receipt.message_id)
    found = store.client.query(
        TableName=store.table_name,
        IndexName=GSI3.name,
        KeyConditionExpression=f"{GSI3.partition_key} = :pk AND {GSI3.sort_key} = :sk",
        ExpressionAttributeValues={":pk": {"S": pk}, ":sk": {"S": sk}},
        ProjectionExpression=f"{PK}, {SK}",
    )["Items"]
    if not found:
        return False
    changes = {"status": receipt.status.value, "receipt_at": timestamp(store.clock()),
               "reason": receipt.reason}  # fmt: skip
    key = (found[0][PK]["S"], found[0][SK]["S"])
    return set_if_still(store, key, changes, {"status": MessageStatus.SENT.value})
