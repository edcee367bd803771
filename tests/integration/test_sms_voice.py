"""Texts and calls through AWS End User Messaging, against its stand-in in front of moto's
server (`local.engines.sms_voice`): sent once with the service's message id; what AWS
would refuse for good (a body past its length, an identity it does not know, a price over
the most allowed, AWS's monthly limit) failed at once and never retried; a throttle
(message parts a second past the number's rate) tried again; each account's own monthly
cap, reserved before the call on DynamoDB Local, held under racing sends. The outbox
lists them beside the emails and the Slack stand-in's messages, in HTML and JSON; the
Slack stand-in answers as Slack does."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

import boto3
import pytest
import requests
from botocore.config import Config

from incidents.contacts.messages import OutgoingMessage
from incidents.contacts.models import Channel
from incidents.events_out.endpoints import EndpointPolicy
from incidents.notifications.channels import EndUserMessaging, Handed, SesEmail, SlackWebhook
from incidents.notifications.spend import MICROS, SpendCap, parts
from incidents.store import Store
from local.api.gateway import LocalGateway
from local.engines import sms_voice
from local.engines.sms_voice import LOCAL_IDENTITY, LOCAL_NUMBER, SmsVoice
from local.events.messaging import PAGE_SENDER, Messaging

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


@pytest.fixture
def sms(client: PinpointSMSVoiceV2Client, store: Store) -> EndUserMessaging:
    """Texts from the stage's number, each account's budget $5 a month (20 parts)."""
    budget = SpendCap(store, Channel.SMS, Decimal(5))
    return EndUserMessaging(client, Channel.SMS, LOCAL_IDENTITY, budget)


@pytest.fixture
def call(client: PinpointSMSVoiceV2Client, store: Store) -> EndUserMessaging:
    budget = SpendCap(store, Channel.VOICE, Decimal(5))
    return EndUserMessaging(client, Channel.VOICE, LOCAL_IDENTITY, budget)


def message(channel: Channel, body: str, to: str = TO, account: str = "acct_1") -> OutgoingMessage:
    return OutgoingMessage(
        account_id=account, channel=channel, to=to, subject=None, body=body, user_id="user_1",
        contact_method_id="cm_1", expires_at="2099-01-01T00:00:00.000000Z", purpose="page",
    )  # fmt: skip


def spent(cap: SpendCap, account: str) -> Decimal:
    """The account's spend of this month on the cap's channel, in dollars."""
    item = cap.store.get(*cap.key(account, cap.store.clock()))
    return Decimal(item["spent_micros"]["N"]) / MICROS if item else Decimal(0)


def test_a_text_and_a_call_are_sent_once_each_from_the_stage_s_number(
    service: SmsVoice, sms: EndUserMessaging, call: EndUserMessaging
) -> None:
    text = sms.hand(message(Channel.SMS, "#42 SEV1 triggered: db"))
    called = call.hand(message(Channel.VOICE, "Incident 42."))
    assert text.sent
    assert called.sent
    assert [(m["channel"], m["to"], m["from"], m["message_id"]) for m in service.messages] == [
        ("sms", TO, LOCAL_NUMBER, text.message_id),
        ("voice", TO, LOCAL_NUMBER, called.message_id),
    ]


def test_what_aws_refuses_for_good_fails_at_once_and_costs_nothing(
    service: SmsVoice, sms: EndUserMessaging, call: EndUserMessaging
) -> None:
    too_long = sms.hand(message(Channel.SMS, "x" * 1601))
    unknown = replace(sms, origination_identity=LOCAL_IDENTITY + "-gone").hand(
        message(Channel.SMS, "hi")
    )
    not_e164 = sms.hand(message(Channel.SMS, "hi", to="4155552671x"))
    service.voice.price = Decimal("0.30")  # a country dearer than the most a minute may cost
    dear = call.hand(message(Channel.VOICE, "Incident 42."))
    for refused in (too_long, unknown, not_e164, dear):
        assert (refused.sent, refused.retry_after) == (False, None), refused
    assert (too_long.reason or "").startswith("ValidationException")
    assert (unknown.reason or "").startswith("ResourceNotFoundException")
    assert "PRICE_OVER_THRESHOLD" in (dear.reason or "")
    assert parts("😀" * 36) == 2, "an emoji is two UTF-16 units: 72 of 70 a part"
    assert service.messages == []
    assert spent(sms.spend, "acct_1") == spent(call.spend, "acct_1") == 0, "given back"


def test_aws_s_own_monthly_limit_is_refused_for_good_saying_so(
    service: SmsVoice, sms: EndUserMessaging, call: EndUserMessaging
) -> None:
    service.text.limit = Decimal("0.02")  # two parts at the stand-in's price
    service.parts_per_second = 10
    sent = [sms.hand(message(Channel.SMS, f"page {n}")) for n in range(3)]
    assert [h.sent for h in sent] == [True, True, False]
    assert sent[2].retry_after is None
    assert "MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT" in (sent[2].reason or "")
    assert call.hand(message(Channel.VOICE, "Incident 42.")).sent, "voice has its own limit"


def test_an_account_s_cap_holds_under_racing_sends_and_a_new_month_starts_afresh(
    service: SmsVoice, sms: EndUserMessaging, store: Store
) -> None:
    """$5 at most $0.25 a part: 20 one-part texts a month for an account, however many
    workers send at once; a text dearer than the whole budget never; another account and
    the next month have their own."""
    service.parts_per_second = 100
    with ThreadPoolExecutor(8) as pool:
        raced = list(pool.map(lambda n: sms.hand(message(Channel.SMS, f"page {n}")), range(24)))
    assert sum(h.sent for h in raced) == 20
    capped = [h for h in raced if not h.sent]
    assert {(h.retry_after, (h.reason or "")[:10]) for h in capped} == {(None, "spend_cap:")}
    assert len(service.messages) == 20, "a capped text never reaches AWS"
    assert spent(sms.spend, "acct_1") == Decimal(5)
    too_dear = sms.hand(message(Channel.SMS, "日本" * 800, account="acct_3"))  # 24 parts: $6
    assert (too_dear.reason or "").startswith("spend_cap"), "not even a new month's first"
    assert sms.hand(message(Channel.SMS, "page", account="acct_2")).sent
    store.clock = lambda: datetime(2099, 2, 1, tzinfo=UTC)
    assert sms.hand(message(Channel.SMS, "page")).sent, "a new month"


def test_parts_past_the_number_s_rate_are_throttled_and_tried_again(
    service: SmsVoice, sms: EndUserMessaging
) -> None:
    assert parts("é" * 160) == 1, "é is GSM 03.38's: 160 septets, one part"
    assert parts("€" * 81) == 2, "an extension character takes two septets"
    assert parts("日本" * 36) == 2, "UCS-2: 67 characters a part when split"
    answers = [sms.hand(message(Channel.SMS, "x" * 300)) for _ in range(2)]  # 2 parts each
    assert answers[0].sent
    assert answers[1] == Handed(
        retry_after=0, reason="ThrottlingException: message parts per second exceeded"
    )


def test_the_outbox_lists_emails_texts_and_calls_as_html_and_json(
    messaging: Messaging, service: SmsVoice, sms: EndUserMessaging, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in messaging.environment().items():
        monkeypatch.setenv(name, value)
    ses = boto3.client("sesv2", endpoint_url=messaging.endpoint, region_name="us-east-1")
    email = SesEmail(ses, PAGE_SENDER).hand(message(Channel.EMAIL, "inc_x", to="ada@example.com"))
    text = sms.hand(message(Channel.SMS, "#7 <b>disk</b>"))
    link = "http://127.0.0.1:4000/page-links/" + "Ab_-" * 5 + "Cd"
    linked = sms.hand(message(Channel.SMS, f"#8 disk {link}"))
    hook = f"{messaging.endpoint}/_stand-in/slack/services/T0/B0/outbox"
    posted = SlackWebhook(EndpointPolicy(allow_loopback=True)).hand(
        message(Channel.SLACK, "#9 disk", to=hook)
    )
    assert posted.sent
    gateway = LocalGateway({}, {})  # the outbox is the gateway's own page
    status, headers, body = gateway.respond("GET", "/outbox", {"Accept": "application/json"}, b"")
    assert (status, headers["Content-Type"]) == (200, "application/json")
    listed = {m["message_id"]: m for m in json.loads(body)["items"]}
    assert listed[email.message_id]["channel"] == "email"
    assert listed[text.message_id] == {
        "channel": "sms", "to": TO, "subject": None, "body": "#7 <b>disk</b>",
        "message_id": text.message_id, "incident_id": None, "ack_url": None, "status": "sent",
    }  # fmt: skip
    assert listed[linked.message_id]["ack_url"] == link
    (slack,) = [m for m in listed.values() if m["channel"] == "slack" and m["to"] == hook]
    assert slack["body"] == "#9 disk"
    status, headers, page = gateway.respond("GET", "/outbox", {"Accept": "text/html"}, b"")
    assert headers["Content-Type"].startswith("text/html")
    assert b"#7 &lt;b&gt;disk&lt;/b&gt;" in page
    assert b"<b>disk" not in page
    assert f'<a href="{link}">'.encode() in page, "the link is one to follow"


def test_the_slack_stand_in_answers_as_slack_does(messaging: Messaging) -> None:
    """One message a second a channel (429 with Retry-After, which the carrier waits for),
    a body without text refused for good; another channel is not held up."""
    slack = SlackWebhook(EndpointPolicy(allow_loopback=True))
    hooks = [f"{messaging.endpoint}/_stand-in/slack/services/T0/B0/{name}" for name in "ab"]
    first = slack.hand(message(Channel.SLACK, "one", to=hooks[0]))
    again = slack.hand(message(Channel.SLACK, "two", to=hooks[0]))
    other = slack.hand(message(Channel.SLACK, "three", to=hooks[1]))
    assert (first.sent, other.sent) == (True, True)
    assert (again.sent, again.retry_after) == (False, 1)
    empty = requests.post(hooks[1] + "x", json={"blocks": []}, timeout=5)
    assert (empty.status_code, empty.text) == (400, "invalid_payload")
