"""Opaque, signed, constant-size page cursors.

A token is ``base64url(version | state | mac)`` where ``mac`` is a truncated
HMAC-SHA256 over the version, a *binding* (who asks and with which query parameters)
and the state. The binding is not stored in the token, so a token replayed on another
list, by another caller or in another account fails verification. The state is what a
strategy needs to resume (for an ordered merge: the last returned sort key), never the
number of streams.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re

from dynashard.errors import InvalidCursorError

CURSOR_VERSION = 4
"""4: the state starts with what the cursor's streams are (`streams_family`); 3 (0.1.0),
whose cursors are still read, did not name them; 2 was JSON."""
READ_VERSIONS = frozenset({3, CURSOR_VERSION})
MAC_BYTES = 16
MIN_SECRET_BYTES = 32
MAX_TOKEN_CHARS = 4096
_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")


class CursorCodec:
    """Signs and verifies cursors with a secret from configuration (no default, ever)."""

    def __init__(self, secret: bytes) -> None:
        if not isinstance(secret, bytes):
            raise TypeError(
                f"the cursor secret must be bytes, not {type(secret).__name__} "
                "(a str secret: encode it, or better, decode it from base64 or hex)"
            )
        if len(secret) < MIN_SECRET_BYTES:
            raise ValueError(f"the cursor secret must be at least {MIN_SECRET_BYTES} bytes")
        self._secret = secret

    def _mac(self, version: int, binding: str, state: bytes) -> bytes:
        bound = binding.encode()
        message = b"".join([bytes([version]), len(bound).to_bytes(4, "big"), bound, state])
        return hmac.new(self._secret, message, hashlib.sha256).digest()[:MAC_BYTES]

    def encode(self, state: bytes, binding: str) -> str:
        """A token carrying `state`, valid only with the same `binding`."""
        token = bytes([CURSOR_VERSION]) + state + self._mac(CURSOR_VERSION, binding, state)
        return base64.urlsafe_b64encode(token).rstrip(b"=").decode()

    def decode(self, token: str, binding: str) -> bytes:
        """The state inside `token`; `InvalidCursorError` if it is malformed, altered or foreign."""
        return self.decode_versioned(token, binding)[1]

    def decode_versioned(self, token: str, binding: str) -> tuple[int, bytes]:
        """The version `token` was issued with and its state: a reader of an older version's
        state reads it as that version wrote it."""
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
            raise InvalidCursorError("the cursor is empty or too long")
        raw = _strict_b64decode(token)
        if len(raw) <= 1 + MAC_BYTES or raw[0] not in READ_VERSIONS:
            raise InvalidCursorError("the cursor is malformed or from an unsupported version")
        state, mac = raw[1:-MAC_BYTES], raw[-MAC_BYTES:]
        if not hmac.compare_digest(mac, self._mac(raw[0], binding, state)):
            raise InvalidCursorError("the cursor does not belong to this query or was altered")
        return raw[0], state


def _strict_b64decode(token: str) -> bytes:
    """The bytes of a token exactly as `encode` writes it: unpadded base64url, nothing else.

    Python's decoder skips characters outside the alphabet and ignores the unused low bits
    of the last character, so several strings would decode alike; a cursor is one string.
    """
    if not _ALPHABET.fullmatch(token):
        raise InvalidCursorError("the cursor is not valid base64url")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        raise InvalidCursorError("the cursor is not valid base64url") from None
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != token:
        raise InvalidCursorError("the cursor is not in canonical base64url")
    return raw
