"""A contact method's verification code reaches it: the message its create, a new address
or ``send-verification`` leaves pending goes from the table's stream (DynamoDB Local's)
through the delivery queue (moto's SQS FIFO) to its channel's provider (moto's SES v2, the
End User Messaging stand-in, a Slack stand-in), once however often its job comes; a code
replaced before it went out is never sent, and one past its expiry is failed, not sent
late."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from dynashard.query import Item
from incidents.contacts.commands import create_contact_method, send_verification
from incidents.contacts.messages import MessageStatus, message_key
from incidents.contacts.models import Channel, ContactMethodBody
from incidents.events_out.endpoints import EndpointPolicy
from incidents.items import deserialize
from incidents.notifications.channels import Carriers, SlackWebhook
from incidents.notifications.codes import code_job, is_code_message, send_code
from incidents.notifications.delivery import Outcome
from incidents.requests import SaveProfile
from incidents.store import Caller, Store, new_id
from incidents.users import save_profile
from local.engines import sms_voice
from local.events.event_pipeline import pipeline_pollers, running
from local.events.messaging import Messaging
from tests.helpers.api_harness import Api
from tests.helpers.deliveries import wait_for
from tests.helpers.people import new_api_user
from tests.helpers.providers import Slack, emails_sent
from tests.integration.conftest import API_TABLE

pytestmark = pytest.mark.integration
T0 = datetime(2027, 4, 5, 10, 0, 5, tzinfo=UTC)
LOOPBACK = EndpointPolicy(allow_loopback=True)
CODE = re.compile(r"\b[0-9]{6}\b")


@pytest.fixture(scope="module")
def pipeline(api: Api, messaging: Messaging, dynamodb_endpoint: str) -> Iterator[None]:
    with running(pipeline_pollers(dynamodb_endpoint, API_TABLE, messaging.queue_url)):
        yield


@pytest.mark.parametrize("kind", ["email", "sms"])
def test_a_new_method_gets_its_code_from_aws_and_is_verified_with_it(
    api: Api, pipeline: None, kind: str
) -> None:
    """Over HTTP and the whole pipeline: email by SES, SMS by End User Messaging (each
    as the stage's provider: moto's SES, the stand-in)."""
    ada = new_api_user(api, new_id("acct"), "Ada")
    address = {
        "email": f"ada.{new_id('x').lower()}@example.com",
        "sms": f"+1415555{secrets.randbelow(10_000):04d}",
    }[kind]
    body = {"contact_method": {"type": f"{kind}_contact_method", "label": "Home",
                               "address": address}}  # fmt: skip
    before = len(sms_voice.SERVICE.messages)
    made = api.call("create_contact_method", ada, {"user_id": ada.user_id}, body=body)
    assert made.status == 201, made.body
    method = made.body["contact_method"]["id"]

    def sent() -> list[str]:
        """The bodies sent to the method's address since the test began."""
        emails = [m.body for m in emails_sent() if m.destinations["ToAddresses"] == [address]]
        texts = [m["body"] for m in sms_voice.SERVICE.messages[before:] if m["to"] == address]
        return emails + texts

    wait_for(lambda: bool(sent()), what="the code's message")
    (message,) = sent()
    (code,) = CODE.findall(message)
    path = {"user_id": ada.user_id, "contact_method_id": method}
    verified = api.call("verify_contact_method", ada, path, body={"code": code})
    assert verified.status == 200, verified.body
    assert verified.body["contact_method"]["verified"] is True


@pytest.fixture
def ada(store: Store) -> Caller:
    store.clock = lambda: T0
    who = Caller(new_id("acct"), new_id("user"))
    save_profile(store, who, SaveProfile(name="Ada", email="ada@example.com"))
    return who


def slack_method(store: Store, who: Caller, url: str) -> str:
    body = ContactMethodBody.model_validate(
        {"contact_method": {"type": "slack_contact_method", "label": "ops", "address": url}}
    )
    return create_contact_method(store, who, who.user_id, body, check_url=LOOPBACK.check_url).id


def code_item(store: Store, who: Caller, method: str) -> Item:
    """The method's code message as it is now (the stream's new image of its last write)."""
    item = store.get(*message_key(who.account_id, who.user_id, method))
    assert item is not None
    return item


def test_a_code_replaced_before_it_went_out_is_never_sent_and_each_goes_once(
    store: Store, ada: Caller, slack: Slack
) -> None:
    method = slack_method(store, ada, slack.url)
    first = code_item(store, ada, method)
    store.clock = lambda: T0 + timedelta(minutes=2)
    send_verification(store, ada, ada.user_id, method)
    newer = code_item(store, ada, method)
    assert is_code_message({"eventName": "INSERT", "dynamodb": {"NewImage": first}})
    assert is_code_message({"eventName": "MODIFY", "dynamodb": {"NewImage": newer}})
    carriers: Carriers = {Channel.SLACK: SlackWebhook(LOOPBACK)}
    assert send_code(store, carriers, code_job(first)) == Outcome(None)
    assert slack.bodies == [], "the replaced code is not sent"
    outcomes = [send_code(store, carriers, code_job(newer)) for _ in range(2)]  # as SQS may
    assert outcomes == [Outcome(MessageStatus.SENT), Outcome(None)]
    (posted,) = slack.bodies
    settled = deserialize(code_item(store, ada, method))
    assert CODE.findall(posted["text"]) == CODE.findall(settled["body"])
    assert (settled["status"], settled["attempts"]) == ("sent", 1)
    tried = {"eventName": "MODIFY", "dynamodb": {"NewImage": code_item(store, ada, method)}}
    assert not is_code_message(tried), "the record of its try is not sent again"


def test_a_code_past_its_expiry_or_without_a_provider_is_failed_saying_why(
    store: Store, ada: Caller, slack: Slack
) -> None:
    method = slack_method(store, ada, slack.url)
    assert send_code(store, {}, code_job(code_item(store, ada, method))) == Outcome(
        MessageStatus.FAILED
    )
    late = slack_method(store, ada, slack.url + "/2")
    store.clock = lambda: T0 + timedelta(minutes=16)
    carriers: Carriers = {Channel.SLACK: SlackWebhook(LOOPBACK)}
    assert send_code(store, carriers, code_job(code_item(store, ada, late))) == Outcome(
        MessageStatus.FAILED
    )
    assert slack.bodies == []
    reasons = [deserialize(code_item(store, ada, m))["reason"] for m in (method, late)]
    assert reasons[0].startswith("no provider for slack")
    assert reasons[1].startswith("stale")
