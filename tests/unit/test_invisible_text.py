"""One-line text shows everything it holds (issue 29, point 5; issue 41, point 4): format
characters that hide text (zero-width space and non-joiner, word joiner, BOM, soft hyphen,
tag characters, U+206A-206F, U+FFF9-FFFB, U+180E), every other Default_Ignorable_Code_Point
(the combining grapheme joiner, Khmer and Mongolian invisibles, variation selectors after
a letter, ideographic variation selectors), invisible fillers and line separators are
refused anywhere in a title, name or note, while emoji sequences keep their joiners,
presentation selectors and flag tags; emails are checked by email-validator."""

from __future__ import annotations

import json
import re

import pydantic
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from incidents.requests import CreateIncident, SaveProfile
from incidents.text import CLEAN_CHARACTERS, IN_CONTEXT, clean_text

HIDDEN = [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\U000e0041", "\u206a",
    "\u206f", "\ufff9", "\ufffb", "\u180e", "\u115f", "\u3164", "\uffa0", "\u2800",
    "\u2028", "\u2029", "\u034f", "\u17b4", "\u17b5", "\u180b", "\u180f", "\ufe00",
    "\ufe0f", "\ufe0e", "\U000e0100", "\U000e01ef", "\u2065", "\ufff0", "\U0001bca0",
    "\U0001d173",
]  # fmt: skip
EMOJI = [
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # family: ZWJ sequence
    "\u2764\ufe0f\u200d\U0001f525",  # heart on fire: VS16 then ZWJ
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # England
    "\U0001f44d\U0001f3fd",  # skin tone
    "\u2764\ufe0f",  # emoji presentation
    "\u2764\ufe0e",  # text presentation
    "1\ufe0f\u20e3",  # keycap
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


def test_a_run_of_ideographic_variation_selectors_is_refused() -> None:
    """200 hidden characters after "ok": 800 hidden bytes, as tag characters would carry."""
    with pytest.raises(ValueError, match="U\\+E0100"):
        clean_text("ok" + "".join(chr(0xE0100 + n) for n in range(200)))


@given(st.characters(codec="utf-8"))
def test_the_documented_pattern_refuses_what_is_refused(char: str) -> None:
    """On every plane the document's pattern and `clean_text` agree, except for the
    characters whose neighbours decide (the joiner between emoji, a presentation selector
    after one, tags in a flag), which the pattern lets through."""
    assume(char not in IN_CONTEXT)
    text = f"a{char}b"
    try:
        clean_text(text)
        accepted = True
    except ValueError:
        accepted = False
    assert accepted == bool(re.fullmatch(CLEAN_CHARACTERS, text)), hex(ord(char))


@pytest.mark.parametrize("code", [0x034F, 0x17B4, 0xFE00, 0xE0100, 0xE0001, 0x1D173, 0xFFFF])
def test_the_pattern_refuses_hidden_characters_on_every_plane(code: int) -> None:
    """What a JSON Schema validator reads: the pattern through a JSON round trip (astral
    characters travel as surrogate pairs) refuses each of them."""
    pattern = json.loads(json.dumps(CLEAN_CHARACTERS))
    assert re.fullmatch(pattern, "ok")
    assert not re.fullmatch(pattern, f"ok{chr(code)}")


@pytest.mark.parametrize(
    "email", ["a@b", "us\u200ber@example.com", "x@y\ufe0f", "two@@example.com", "@example.com"]
)
def test_an_email_email_validator_refuses_is_refused(email: str) -> None:
    with pytest.raises(pydantic.ValidationError):
        SaveProfile(name="Ada", email=email)


def test_an_email_is_stored_normalized() -> None:
    assert SaveProfile(name="Ada", email="Ada@Example.COM").email == "Ada@example.com"
