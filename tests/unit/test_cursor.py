"""Cursors: signed, bound, constant-size; every bad token is the one clear exception."""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynashard import CursorCodec, FanOutQuery, InvalidCursorError, PartitionStream
from dynashard.query.streams import streams_digest

SECRET = b"k" * 32
CODEC = CursorCodec(SECRET)
TOKEN = CODEC.encode(b"OPEN#2026-11-23T00:00:00Z#inc_2J9dTn4Qb1", "acct_1|user_1|/me/incidents")


def test_round_trip() -> None:
    assert CODEC.decode(TOKEN, "acct_1|user_1|/me/incidents").startswith(b"OPEN#")
    assert not set("=+/") & set(TOKEN), "base64url without padding"


@pytest.mark.parametrize("position", range(len(TOKEN)))
def test_tampering_any_character_is_rejected(position: int) -> None:
    replacement = "A" if TOKEN[position] != "A" else "B"
    tampered = TOKEN[:position] + replacement + TOKEN[position + 1 :]
    with pytest.raises(InvalidCursorError):
        CODEC.decode(tampered, "acct_1|user_1|/me/incidents")


@given(data=st.binary(min_size=1, max_size=80), flip=st.integers(0, 10**6))
def test_flipping_any_bit_of_the_payload_is_rejected(data: bytes, flip: int) -> None:
    raw = bytearray(base64.urlsafe_b64decode(TOKEN + "=" * (-len(TOKEN) % 4)))
    raw[flip % len(raw)] ^= 1 << (flip % 8)
    tampered = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    with pytest.raises(InvalidCursorError):
        CODEC.decode(tampered, "acct_1|user_1|/me/incidents")


@pytest.mark.parametrize(
    "binding",
    ["acct_2|user_1|/me/incidents", "acct_1|user_2|/me/incidents", "acct_1|user_1|/teams"],
)
def test_other_binding_is_rejected(binding: str) -> None:
    with pytest.raises(InvalidCursorError, match="does not belong"):
        CODEC.decode(TOKEN, binding)


@pytest.mark.parametrize("garbage", ["", "!!!", "abc", "a" * 5000, "AQ", TOKEN[:-3]])
def test_garbage_is_rejected(garbage: str) -> None:
    with pytest.raises(InvalidCursorError):
        CODEC.decode(garbage, "acct_1|user_1|/me/incidents")


def _unused_low_bits_set() -> tuple[str, str]:
    """A token whose last character has unused low bits, and the same bytes with them set."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    token = next(t for n in range(1, 8) if len(t := CODEC.encode(b"x" * n, "b")) % 4 in {2, 3})
    spare = {2: 4, 3: 2}[len(token) % 4]
    value = alphabet.index(token[-1]) | ((1 << spare) - 1)
    return token, token[:-1] + alphabet[value]


def test_unused_low_bits_do_not_make_another_valid_cursor() -> None:
    token, variant = _unused_low_bits_set()
    assert CODEC.decode(token, "b") == CODEC.decode(token, "b")
    assert base64.urlsafe_b64decode(variant + "==") == base64.urlsafe_b64decode(token + "==")
    assert variant != token
    with pytest.raises(InvalidCursorError, match="canonical"):
        CODEC.decode(variant, "b")


@pytest.mark.parametrize(
    "variant",
    [
        TOKEN + "!!!",
        TOKEN[:5] + "." + TOKEN[5:],
        TOKEN + "====",
        TOKEN + "=",
        " " + TOKEN,
        TOKEN + "\n",
        TOKEN[:3] + "+" + TOKEN[4:],
        TOKEN[:3] + "/" + TOKEN[4:],
    ],
)
def test_a_cursor_is_one_exact_string(variant: str) -> None:
    """Python's base64 decoder forgives all of these; the codec does not."""
    assert variant != TOKEN
    with pytest.raises(InvalidCursorError):
        CODEC.decode(variant, "acct_1|user_1|/me/incidents")


def test_other_secret_is_rejected() -> None:
    with pytest.raises(InvalidCursorError):
        CursorCodec(b"x" * 32).decode(TOKEN, "acct_1|user_1|/me/incidents")


def test_secret_is_required_and_long_enough() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        CursorCodec(b"short")


def test_length_does_not_depend_on_stream_count() -> None:
    lengths = set()
    for streams in (1, 4, 16, 64, 256):
        query = FanOutQuery(
            streams=[PartitionStream("t", "PK", f"a#{n}", "SK") for n in range(streams)],
            binding="b",
        )
        lengths.add(len(CODEC.encode(b"OPEN#2026-11-23#inc_1", query.cursor_binding())))
    assert len(lengths) == 1


def test_cursor_of_another_direction_or_strategy_is_rejected() -> None:
    streams = [PartitionStream("t", "PK", "a#0", "SK")]
    ascending = FanOutQuery(streams=streams, binding="b")
    descending = FanOutQuery(streams=streams, binding="b", descending=True)
    token = CODEC.encode(b"k", ascending.cursor_binding())
    with pytest.raises(InvalidCursorError):
        CODEC.decode(token, descending.cursor_binding())


@pytest.mark.parametrize(
    "change",
    [
        {"expression_names": {"#s": "severity"}},
        {"projection": "PK, SK"},
        {"consistent_read": True},
        {"expression_values": {":v": {"S": "SEV2"}}},
    ],
)
def test_every_field_of_a_stream_is_in_its_digest(change: dict[str, Any]) -> None:
    """A plan made under one filter must not be reused under another: two stream lists that
    differ only in a filter's attribute name once shared a digest."""
    base = PartitionStream(
        "t",
        "PK",
        "p",
        "SK",
        filter_expression="#s = :v",
        expression_names={"#s": "status"},
        expression_values={":v": {"S": "SEV1"}},
    )
    assert streams_digest([base]) != streams_digest([replace(base, **change)])
