"""Contact methods' pure parts: numbers checked and written as E.164 by libphonenumber's
plan of each country, the request bodies by type (push refused: it comes later), rules'
references under either name of a type, verification codes (six digits, a digest, an
expiry, five wrong attempts, one new code a minute) and the messages that carry them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pydantic
import pytest

from incidents.contacts.messages import verification_message
from incidents.contacts.models import (
    Channel,
    ContactMethod,
    ContactMethodBody,
    ContactMethodType,
    NotificationRuleBody,
    PhoneMethodRequest,
)
from incidents.contacts.phones import e164
from incidents.contacts.verification import (
    CODE_LIFETIME,
    MAX_ATTEMPTS,
    RESEND_AFTER,
    CodeExpiredError,
    CodeSentRecentlyError,
    TooManyAttemptsError,
    issued,
    live,
    matches,
    new_code,
    wrong,
)

NOW = datetime(2027, 1, 15, 9, 0, tzinfo=UTC)
METHOD = "cm_" + "A" * 27


@pytest.mark.parametrize(
    ("typed", "country", "written"),
    [
        ("+1 (415) 555-2671", None, ("+14155552671", 1)),
        ("(415) 555-2671", 1, ("+14155552671", 1)),
        ("2079460958", 44, ("+442079460958", 44)),
        ("+49 30 901820", None, ("+4930901820", 49)),
        ("  +33 1 42 68 53 00 ", 33, ("+33142685300", 33)),
    ],
)
def test_numbers_are_written_as_e164(
    typed: str, country: int | None, written: tuple[str, int]
) -> None:
    assert e164(typed, country) == written


@pytest.mark.parametrize(
    ("typed", "country", "problem"),
    [
        ("4155552671", None, "country_code"),
        ("+1 555 555 5555", None, "numbering plan"),
        ("+44 20 7946 0958", 1, "country code is 44, not 1"),
        ("+999 1234567", None, "not a phone number"),
        ("phone", 1, "not a phone number"),
        ("+1 415 555 26711", None, "numbering plan"),
    ],
)
def test_numbers_that_cannot_exist_are_refused(
    typed: str, country: int | None, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        e164(typed, country)


def test_a_request_body_is_read_by_its_type() -> None:
    body = ContactMethodBody.model_validate(
        {"contact_method": {"type": "sms_contact_method", "label": " Mobile ",
                            "address": "2079460958", "country_code": 44}}
    )  # fmt: skip
    assert isinstance(body.contact_method, PhoneMethodRequest)
    assert (body.contact_method.label, body.contact_method.address) == ("Mobile", "+442079460958")
    for refused in (
        {"type": "push_notification_contact_method", "label": "x", "address": "x"},
        {"type": "email_contact_method", "label": "x", "address": "a@example.com", "x": 1},
        {"type": "email_contact_method", "label": "x", "address": "a@b.c", "country_code": 1},
        {"type": "sms_contact_method", "label": "x", "address": "+14155552671", "enabled": 1},
        {"type": "slack_contact_method", "label": "x", "address": "ftp://hooks.example.com"},
    ):
        with pytest.raises(pydantic.ValidationError):
            ContactMethodBody.model_validate({"contact_method": refused})


@pytest.mark.parametrize("named", ["phone_contact_method", "phone_contact_method_reference"])
def test_a_rule_names_its_method_s_type_either_way(named: str) -> None:
    body = NotificationRuleBody.model_validate(
        {"notification_rule": {"start_delay_in_minutes": 1440, "urgency": "low",
                               "contact_method": {"id": METHOD, "type": named}}}
    )  # fmt: skip
    assert body.notification_rule.contact_method.method_type is ContactMethodType.PHONE


@pytest.mark.parametrize(
    "rule",
    [
        {"start_delay_in_minutes": 1441},
        {"start_delay_in_minutes": "5"},
        {"urgency": "use_support_hours"},
        {"contact_method": {"id": "cm_x", "type": "sms_contact_method"}},
        {"contact_method": {"id": METHOD, "type": "push_notification_contact_method"}},
        {"type": "handoff_notification_rule"},
    ],
)
def test_bad_rules_are_refused(rule: dict[str, object]) -> None:
    good = {"start_delay_in_minutes": 0, "urgency": "high",
            "contact_method": {"id": METHOD, "type": "sms_contact_method"}}  # fmt: skip
    with pytest.raises(pydantic.ValidationError):
        NotificationRuleBody.model_validate({"notification_rule": {**good, **rule}})


def test_a_code_is_six_random_digits_kept_as_a_digest() -> None:
    codes = {new_code() for _ in range(200)}
    assert all(re.fullmatch(r"[0-9]{6}", code) for code in codes)
    assert len(codes) > 190, "drawn at random"
    pending = issued(METHOD, "123456", NOW, None)
    assert "123456" not in pending.model_dump_json()
    assert matches(METHOD, pending, "123456")
    assert not matches(METHOD, pending, "123457")
    assert not matches("cm_" + "B" * 27, issued("cm_" + "B" * 27, "000000", NOW, None), "123456")
    assert pending.expires_at == "2027-01-15T09:15:00.000000Z"


def test_a_code_holds_until_its_expiry_and_five_wrong_attempts() -> None:
    pending = issued(METHOD, "123456", NOW, None)
    assert live(pending, NOW + CODE_LIFETIME - timedelta(microseconds=1)) == pending
    with pytest.raises(CodeExpiredError):
        live(pending, NOW + CODE_LIFETIME)
    with pytest.raises(CodeExpiredError):
        live(None, NOW)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        live(pending, NOW)
        pending, refusal = wrong(pending)
        assert refusal.code == "invalid_code"
        left = MAX_ATTEMPTS - attempt
        assert (f"{left} attempts left" if left else "last attempt") in str(refusal)
    with pytest.raises(TooManyAttemptsError):
        live(pending, NOW)


def test_a_new_code_comes_at_most_once_a_minute() -> None:
    first = issued(METHOD, "123456", NOW, None)
    with pytest.raises(CodeSentRecentlyError, match="ask for another from"):
        issued(METHOD, "654321", NOW + RESEND_AFTER - timedelta(seconds=1), first)
    again = issued(METHOD, "654321", NOW + RESEND_AFTER, first)
    assert (again.attempts, again.sent_at) == (0, "2027-01-15T09:01:00.000000Z")


@pytest.mark.parametrize(
    ("kind", "channel", "subject", "says"),
    [
        (ContactMethodType.EMAIL, Channel.EMAIL, "Your verification code", "042917"),
        (ContactMethodType.SMS, Channel.SMS, None, "042917 is your code"),
        (ContactMethodType.PHONE, Channel.VOICE, None, "0, 4, 2, 9, 1, 7"),
        (ContactMethodType.SLACK, Channel.SLACK, None, "042917"),
    ],
)
def test_each_channel_carries_the_code_in_its_own_words(
    kind: ContactMethodType, channel: Channel, subject: str | None, says: str
) -> None:
    method = ContactMethod(
        id=METHOD, type=kind, summary="Work", label="Work", address="somewhere",
        country_code=None, verified=False, enabled=True,
    )  # fmt: skip
    message = verification_message(
        "acct_x", "user_x", method, "042917", "2027-01-15T09:15:00.000000Z"
    )
    assert (message.channel, message.to, message.subject) == (channel, "somewhere", subject)
    assert says in message.body
    assert (message.purpose, message.contact_method_id) == ("verification", METHOD)
    if channel is Channel.SMS:
        assert len(message.body) <= 160, "one SMS segment"
