"""Sending a contact method's verification code: the message its create, new address or
``send-verification`` left pending (`incidents.contacts.messages`) goes out as a page's
notification does (`delivery.attempt`), on the method's own queue group. A job for a code
since replaced by a newer one sends nothing: the newer code's own job sends that."""

from __future__ import annotations

from typing import Any

from incidents.contacts.messages import (
    MESSAGE_TYPE,
    MessageStatus,
    message_key,
    stored_message,
)
from incidents.events_out.delivery_messages import CodeJob
from incidents.events_out.outbox import writes
from incidents.items import deserialize
from incidents.notifications.channels import Carriers
from incidents.notifications.delivery import Outcome, PendingItem, attempt
from incidents.store import Store

UNTRIED = "0"
"""A new code's tries: the sender's own records of its tries (MODIFYs too) are not sent."""


def is_code_message(record: dict[str, Any]) -> bool:
    """Whether a stream record writes a new code's message (the cloud event source
    mapping's filter, `stacks.event_delivery`, and the local stream poller's)."""
    image = record.get("dynamodb", {}).get("NewImage", {})
    return (
        writes(record, MESSAGE_TYPE)  # a first code inserts it, a newer one is put over it
        and image.get("attempts", {}).get("N") == UNTRIED
    )


def code_job(image: dict[str, Any]) -> CodeJob:
    """The delivery queue's message for a code's message (its item's new image)."""
    values = deserialize(image)
    return CodeJob(
        account_id=values["account_id"],
        user_id=values["user_id"],
        contact_method_id=values["contact_method_id"],
        expires_at=values["expires_at"],
    )


def send_code(store: Store, carriers: Carriers, job: CodeJob) -> Outcome:
    """One attempt at `job`'s code, unless it was sent, replaced, used or deleted."""
    key = message_key(job.account_id, job.user_id, job.contact_method_id)
    found = store.get(*key)
    if found is None:
        return Outcome(None)
    values = deserialize(found)
    if values["status"] != MessageStatus.PENDING or values["expires_at"] != job.expires_at:
        return Outcome(None)
    pending = PendingItem(store, key, int(values["attempts"]), {"expires_at": job.expires_at})
    return attempt(carriers, stored_message(values), pending)
