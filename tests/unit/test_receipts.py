"""What each provider's event on EventBridge says of a message: SES's (its configuration
set's EventBridge destination) and End User Messaging's delivery events, as AWS documents
them; an event that says nothing final is no receipt."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.contacts.messages import MessageStatus
from incidents.notifications.receipts import Receipt, receipt_of

SES_ID = "010001924f1a2b3c-6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d-000000"
SMS_ID = "ed23196c-75ce-4727-93ee-7bf72b64998f"
SAID = "Message has been accepted by phone carrier"


def ses(kind: str, event_type: str, **detail: Any) -> dict[str, Any]:
    """An SES event as its EventBridge destination sends it."""
    return {
        "version": "0", "id": "4d2a1b0c", "detail-type": kind, "source": "aws.ses",
        "account": "111122223333", "time": "2026-11-29T10:00:00Z", "region": "us-east-1",
        "resources": [],
        "detail": {"eventType": event_type, "mail": {"messageId": SES_ID}, **detail},
    }  # fmt: skip


def phone(event_type: str, *, final: bool = True, voice: bool = False) -> dict[str, Any]:
    """An End User Messaging delivery event (AWS's example of a delivered text)."""
    kind = "Voice" if voice else "Text"
    return {
        "version": "0", "id": "5c0fa4f8-e4ba-ed02-6101-c795472fccd0",
        "detail-type": f"{kind} Message Delivery Status Updated", "source": "aws.sms-voice",
        "account": "111122223333", "time": "2025-10-01T18:20:41Z", "region": "us-east-1",
        "resources": [],
        "detail": {
            "eventType": event_type, "eventVersion": "1.0", "eventTimestamp": 1759342841377,
            "isFinal": final, "originationPhoneNumber": "VAJZNBLLDX", "messageId": SMS_ID,
            "messageStatus": "SUCCESSFUL",
            "messageStatusDescription": SAID,
        },
    }  # fmt: skip


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (ses("Email Delivered", "Delivery", delivery={"recipients": ["bob@example.com"]}),
         Receipt(SES_ID, MessageStatus.DELIVERED)),
        (ses("Email Bounced", "Bounce",
             bounce={"bounceType": "Permanent", "bounceSubType": "NoEmail"}),
         Receipt(SES_ID, MessageStatus.FAILED, "bounced: Permanent/NoEmail")),
        (ses("Email Bounced", "Bounce",
             bounce={"bounceType": "Transient", "bounceSubType": "MailboxFull"}),
         Receipt(SES_ID, MessageStatus.FAILED, "bounced: Transient/MailboxFull")),
        (ses("Email Rejected", "Reject", reject={"reason": "Bad content"}),
         Receipt(SES_ID, MessageStatus.FAILED, "rejected: Bad content")),
        (ses("Email Complaint Received", "Complaint"), None),
        (ses("Email Delivery Delayed", "DeliveryDelay"), None),
        (phone("TEXT_SUCCESSFUL"), Receipt(SMS_ID, MessageStatus.DELIVERED)),
        (phone("TEXT_DELIVERED"), Receipt(SMS_ID, MessageStatus.DELIVERED)),
        (phone("TEXT_BLOCKED"), Receipt(SMS_ID, MessageStatus.FAILED, f"TEXT_BLOCKED: {SAID}")),
        (phone("TEXT_QUEUED", final=False), None),
        (phone("TEXT_UNKNOWN", final=False), None),
        (phone("TEXT_UNKNOWN"), Receipt(SMS_ID, MessageStatus.FAILED, f"TEXT_UNKNOWN: {SAID}")),
        (phone("VOICE_ANSWERED", voice=True), Receipt(SMS_ID, MessageStatus.DELIVERED)),
        (phone("VOICE_NO_ANSWER", voice=True),
         Receipt(SMS_ID, MessageStatus.FAILED, f"VOICE_NO_ANSWER: {SAID}")),
        (phone("VOICE_RINGING", voice=True, final=False), None),
        ({"source": "aws.ec2", "detail-type": "EC2 Instance State-change Notification",
          "detail": {"messageId": SMS_ID}}, None),
        ({"source": "aws.ses", "detail-type": "Email Delivered", "detail": {}}, None),
    ],
)  # fmt: skip
def test_each_event_says_what_became_of_its_message(
    event: dict[str, Any], expected: Receipt | None
) -> None:
    assert receipt_of(event) == expected
