"""Texts and calls through AWS End User Messaging, against its stand-in in front of moto's
server (`local.engines.sms_voice`): sent once with the service's message id; what AWS
would refuse for good (a body past its length, an identity it does not know, a month's
spend past its limit) failed at once and never retried; a throttle (message parts a second
past the number's rate) tried again. The outbox lists them beside the emails, in HTML and
JSON."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import TYPE_CHECKING

import boto3
import pytest
from botocore.config import Config

from incidents.contacts.messages import OutgoingMessage
from incidents.contacts.models import Channel
from incidents.notifications.channels import Handed, SesEmail, SmsText, VoiceCall
from local.api.gateway import LocalGateway
from local.engines import sms_voice
from local.engines.sms_voice import LOCAL_IDENTITY, LOCAL_NUMBER, SmsVoice, parts
from local.events.messaging import PAGE_SENDER, Messaging
from tests.helpers.api_harness import Api

if TYPE_CHECKING:
    from mypy_boto3_pinpoint_sms_voice_v2 import PinpointSMSVoiceV2Client

pytestmark = pytest.mark.integration
TO = "+14155552671"


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> SmsVoice:
    """A stand-in of its own for the test, its clock stopped (no refill of the rate)."""
    fresh = SmsVoice(clock=lambda: 0.0)
    monkeypatch.setattr(sms_voice, "SERVICE", fresh)
    return fresh


@pytest.fixture
def client(moto_endpoint: str) -> PinpointSMSVoiceV2Client:
    once = Config(retries={"total_max_attempts": 1})
    return boto3.client(
        "pinpoint-sms-voice-v2", endpoint_url=moto_endpoint, region_name="us-east-1", config=once
    )


def message(channel: Channel, body: str, to: str = TO) -> OutgoingMessage:
    return OutgoingMessage(
        channel=channel, to=to, subject=None, body=body, user_id="user_1",
        contact_method_id="cm_1", expires_at="2099-01-01T00:00:00.000000Z", purpose="page",
    )  # fmt: skip


def test_a_text_and_a_call_are_sent_once_each_from_the_stage_s_number(
    service: SmsVoice, client: PinpointSMSVoiceV2Client
) -> None:
    text = SmsText(client, LOCAL_IDENTITY).hand(message(Channel.SMS, "#42 SEV1 triggered: db"))
    call = VoiceCall(client, LOCAL_IDENTITY).hand(message(Channel.VOICE, "Incident 42."))
    assert text.sent
    assert call.sent
    assert [(m["channel"], m["to"], m["from"], m["message_id"]) for m in service.messages] == [
        ("sms", TO, LOCAL_NUMBER, text.message_id),
        ("voice", TO, LOCAL_NUMBER, call.message_id),
    ]


def test_what_aws_refuses_for_good_fails_at_once(
    service: SmsVoice, client: PinpointSMSVoiceV2Client
) -> None:
    sms = SmsText(client, LOCAL_IDENTITY)
    too_long = sms.hand(message(Channel.SMS, "x" * 1601))
    unknown = SmsText(client, LOCAL_IDENTITY + "-gone").hand(message(Channel.SMS, "hi"))
    not_e164 = sms.hand(message(Channel.SMS, "hi", to="4155552671x"))
    for refused in (too_long, unknown, not_e164):
        assert (refused.sent, refused.retry_after) == (False, None), refused
    assert (too_long.reason or "").startswith("ValidationException")
    assert (unknown.reason or "").startswith("ResourceNotFoundException")
    assert service.messages == []


def test_a_month_past_its_spend_limit_is_refused_for_good_saying_so(
    service: SmsVoice, client: PinpointSMSVoiceV2Client
) -> None:
    service.text.limit = Decimal("0.02")  # two parts at the stand-in's price
    sms = SmsText(client, LOCAL_IDENTITY)
    service.parts_per_second = 10
    sent = [sms.hand(message(Channel.SMS, f"page {n}")) for n in range(3)]
    assert [h.sent for h in sent] == [True, True, False]
    assert sent[2].retry_after is None
    assert "MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT" in (sent[2].reason or "")
    call = VoiceCall(client, LOCAL_IDENTITY).hand(message(Channel.VOICE, "Incident 42."))
    assert call.sent, "voice has its own limit"


def test_parts_past_the_number_s_rate_are_throttled_and_tried_again(
    service: SmsVoice, client: PinpointSMSVoiceV2Client
) -> None:
    sms = SmsText(client, LOCAL_IDENTITY)
    assert parts("é" * 160) == 1, "é is GSM 03.38's: 160 septets, one part"
    assert parts("€" * 81) == 2, "an extension character takes two septets"
    assert parts("日本" * 36) == 2, "UCS-2: 67 characters a part when split"
    answers = [sms.hand(message(Channel.SMS, "x" * 300)) for _ in range(2)]  # 2 parts each
    assert answers[0].sent
    assert answers[1] == Handed(
        retry_after=0, reason="ThrottlingException: message parts per second exceeded"
    )


def test_the_outbox_lists_emails_texts_and_calls_as_html_and_json(
    api: Api, messaging: Messaging, service: SmsVoice, client: PinpointSMSVoiceV2Client
) -> None:
    ses = boto3.client("sesv2", endpoint_url=messaging.endpoint, region_name="us-east-1")
    email = SesEmail(ses, PAGE_SENDER).hand(message(Channel.EMAIL, "inc_x", to="ada@example.com"))
    text = SmsText(client, LOCAL_IDENTITY).hand(message(Channel.SMS, "#7 <b>disk</b>"))
    gateway = LocalGateway(api.handlers, {})
    status, headers, body = gateway.respond("GET", "/outbox", {"Accept": "application/json"}, b"")
    assert (status, headers["Content-Type"]) == (200, "application/json")
    listed = {m["message_id"]: m for m in json.loads(body)["items"]}
    assert listed[email.message_id]["channel"] == "email"
    assert listed[text.message_id] == {
        "channel": "sms", "to": TO, "subject": None, "body": "#7 <b>disk</b>",
        "message_id": text.message_id, "incident_id": None, "status": "sent",
    }  # fmt: skip
    status, headers, page = gateway.respond("GET", "/outbox", {"Accept": "text/html"}, b"")
    assert headers["Content-Type"].startswith("text/html")
    assert b"#7 &lt;b&gt;disk&lt;/b&gt;" in page
    assert b"<b>disk" not in page
