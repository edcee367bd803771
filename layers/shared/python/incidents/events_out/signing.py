"""Webhook secrets and signatures in the Standard Webhooks format (standardwebhooks.com).

A signature covers ``<webhook-id>.<webhook-timestamp>.<body>``, so a captured delivery cannot
be replayed later (receivers refuse old timestamps) nor re-sent under another id; during a
rotation both secrets sign, space-separated in one ``webhook-signature`` header.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    """``whsec_`` + base64 of 32 random bytes (the specification asks for 24 to 64)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def secret_key(secret: str) -> bytes:
    """The bytes a secret stands for (the HMAC key)."""
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)


def signature(secret: str, message_id: str, timestamp: int, body: str) -> str:
    """``v1,<base64 HMAC-SHA256>`` of one delivery under one secret."""
    content = f"{message_id}.{timestamp}.{body}".encode()
    digest = hmac.new(secret_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(secrets_: Sequence[str], message_id: str, timestamp: int, body: str) -> str:
    """The ``webhook-signature`` header: one signature per secret that signs now."""
    return " ".join(signature(secret, message_id, timestamp, body) for secret in secrets_)


def delivery_headers(
    secrets_: Sequence[str], message_id: str, timestamp: int, body: str
) -> dict[str, str]:
    """The headers of one delivery attempt (the id is the event's: the same on a retry)."""
    return {
        "content-type": "application/json",
        "user-agent": "incidents-webhooks/1",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature_header(secrets_, message_id, timestamp, body),
    }
