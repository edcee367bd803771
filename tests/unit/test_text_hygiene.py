"""Text hygiene (`incidents.text`) over arbitrary Unicode: what is kept is NFC, holds no
refused character and shows something; normalizing is idempotent and blind to the form the
text arrived in; the request models apply it to every title, name and email."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from incidents.requests import CreateIncident, CreateTeam, SaveProfile, UpdateIncident
from incidents.text import BIDI_CONTROLS, clean_text

texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


def kept_or_refused(value: str) -> str | None:
    try:
        return clean_text(value)
    except ValueError:
        return None


@given(texts)
def test_what_is_kept_is_nfc_without_refused_characters(value: str) -> None:
    kept = kept_or_refused(value)
    if kept is None:
        return
    assert unicodedata.is_normalized("NFC", kept)
    assert not any(unicodedata.category(c) in ("Cc", "Cs") for c in kept)
    assert not set(kept) & BIDI_CONTROLS
    assert clean_text(kept) == kept


@given(texts)
def test_the_form_text_arrives_in_does_not_matter(value: str) -> None:
    forms = {kept_or_refused(unicodedata.normalize(form, value)) for form in ("NFC", "NFD")}
    assert len(forms) == 1


@given(st.text(st.sampled_from(" \u200b\u200d\ufeff\u0301\u0300\u3164\u2800\u00a0"), min_size=1))
def test_nothing_visible_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="visible"):
        clean_text(value)


@pytest.mark.parametrize(
    "value",
    ["a\x00b", "a\x1b[31mred", "a\x7f", "two\nlines", "cr\r", "\u202eexe.live", "a\u2066b",
     "a\ufdd0", "a\uffff", "x\U0010fffe"],
)  # fmt: skip
def test_control_bidi_and_noncharacters_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="not allowed"):
        clean_text(value)


def test_composed_and_decomposed_are_one_title() -> None:
    composed = CreateIncident(title="Caf\u00e9 down").title
    decomposed = CreateIncident(title="Cafe\u0301 down").title
    assert composed == decomposed == "Caf\u00e9 down"


@pytest.mark.parametrize(
    ("model", "field", "body"),
    [
        (CreateIncident, "title", {"title": "\u200b\u200d"}),
        (UpdateIncident, "title", {"title": "\u202eevil.exe"}),
        (CreateTeam, "name", {"name": "\ufeff"}),
        (SaveProfile, "name", {"name": "\u0301"}),
        (SaveProfile, "email", {"name": "Ada", "email": "a\x00@b\x00"}),
    ],
)
def test_every_text_field_applies_it(model: type, field: str, body: dict[str, str]) -> None:
    with pytest.raises(ValidationError) as refused:
        model(**body)
    assert refused.value.errors()[0]["loc"] == (field,)
