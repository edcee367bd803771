"""One-line text shows everything it holds (issue 29, point 5): format characters that
hide text (zero-width space and non-joiner, word joiner, BOM, soft hyphen, tag characters,
U+206A-206F, U+FFF9-FFFB, U+180E), invisible fillers and line separators are refused
anywhere in a title, name or note, while emoji sequences keep their joiners, variation
selectors and flag tags; emails are checked by email-validator."""

from __future__ import annotations

import re

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from incidents.requests import CreateIncident, SaveProfile
from incidents.text import CLEAN_CHARACTERS, clean_text

HIDDEN = [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\U000e0041", "\u206a",
    "\u206f", "\ufff9", "\ufffb", "\u180e", "\u115f", "\u3164", "\uffa0", "\u2800",
    "\u2028", "\u2029",
]  # fmt: skip
EMOJI = [
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # family: ZWJ sequence
    "\u2764\ufe0f\u200d\U0001f525",  # heart on fire: VS16 then ZWJ
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # England
    "\U0001f44d\U0001f3fd",  # skin tone
    "\u2764\ufe0f",  # emoji presentation
]


@pytest.mark.parametrize("hidden", HIDDEN)
def test_a_hidden_character_inside_visible_text_is_refused(hidden: str) -> None:
    with pytest.raises(ValueError, match=f"U\\+{ord(hidden):04X}"):
        clean_text(f"pay{hidden}ment")
    with pytest.raises(pydantic.ValidationError):
        CreateIncident(title=f"Checkout {hidden}down")


@pytest.mark.parametrize("emoji", EMOJI)
def test_emoji_sequences_keep_working(emoji: str) -> None:
    assert clean_text(f"Deploy {emoji} done") == f"Deploy {emoji} done"


@given(st.characters(max_codepoint=0xFFFF))
def test_the_documented_pattern_refuses_what_is_refused(char: str) -> None:
    """Within the Basic Multilingual Plane the document's pattern and `clean_text` agree,
    except for the joiner (allowed between emoji, which a pattern cannot say)."""
    text = f"a{char}b"
    try:
        clean_text(text)
        accepted = True
    except ValueError:
        accepted = False
    if (char != "\u200d" and ord(char) < 0xD800) or ord(char) > 0xDFFF:
        assert accepted == bool(re.fullmatch(CLEAN_CHARACTERS, text)), hex(ord(char))


@pytest.mark.parametrize(
    "email", ["a@b", "us\u200ber@example.com", "x@y\ufe0f", "two@@example.com", "@example.com"]
)
def test_an_email_email_validator_refuses_is_refused(email: str) -> None:
    with pytest.raises(pydantic.ValidationError):
        SaveProfile(name="Ada", email=email)


def test_an_email_is_stored_normalized() -> None:
    assert SaveProfile(name="Ada", email="Ada@Example.COM").email == "Ada@example.com"
