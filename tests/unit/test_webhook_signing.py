"""Signatures in the Standard Webhooks format, checked by the specification's own package."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from incidents.events_out.signing import delivery_headers, new_secret, secret_key

BODY = '{"type":"incident.created","timestamp":"2026-11-24T08:00:00.000000Z","data":{}}'


def test_a_secret_is_whsec_and_32_random_bytes() -> None:
    secret = new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert secret_key(secret) != secret_key(new_secret())


def test_standardwebhooks_verifies_what_the_sender_signs() -> None:
    secret = new_secret()
    now = int(datetime.now(UTC).timestamp())
    headers = delivery_headers([secret], "evt_1", now, BODY)
    assert Webhook(secret).verify(BODY, headers) is not None


def test_both_secrets_verify_during_a_rotation() -> None:
    old, new = new_secret(), new_secret()
    now = int(datetime.now(UTC).timestamp())
    headers = delivery_headers([new, old], "evt_1", now, BODY)
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        Webhook(secret).verify(BODY, headers)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"webhook-id": "evt_2"}, "another id"),
        ({"webhook-timestamp": "1"}, "a replay of an old delivery"),
    ],
)
def test_a_changed_or_replayed_delivery_does_not_verify(change: dict[str, str], why: str) -> None:
    secret = new_secret()
    now = int(datetime.now(UTC).timestamp())
    headers = {**delivery_headers([secret], "evt_1", now, BODY), **change}
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY, headers)


def test_a_changed_body_or_another_secret_does_not_verify() -> None:
    secret = new_secret()
    now = int(datetime.now(UTC).timestamp())
    headers = delivery_headers([secret], "evt_1", now, BODY)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.replace("created", "resolved"), headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(BODY, headers)
