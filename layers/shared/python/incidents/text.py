"""Text people type into titles, names and emails: one Unicode form, nothing invisible or
deceptive.

Composed and decomposed ``é`` are one title after NFC normalization (so they compare and
sort alike). Refused, with a message naming the character: control characters (NUL, ESC,
DEL, CR, LF, TAB: a title is one line), bidirectional controls (``\\u202Eevil.exe`` shows as
``exe.live``), noncharacters, and values with nothing visible in them (only spaces,
zero-width characters, a byte-order mark, fillers or lone combining marks).
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Marks, embeddings, overrides and isolates that reorder how text is shown."""
REFUSED_CLASS = (
    "\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e"
    "\\u2066-\\u2069\\ufdd0-\\ufdef\\ufffe\\uffff"
)
"""The refused characters of the Basic Multilingual Plane, as the inside of a regex class."""
CLEAN_CHARACTERS = f"^[^{REFUSED_CLASS}]*$"
"""The refused characters of the Basic Multilingual Plane as a JSON Schema pattern, for the
document; `clean_text` is what enforces (and also refuses astral noncharacters)."""
TEXT_RULES = (
    "Stored in Unicode NFC. No control characters (tab and newline included), bidirectional "
    "controls or noncharacters; must contain a visible character."
)
INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Fillers (and the blank braille pattern) that are letters or symbols yet show nothing."""


def clean_text(value: str) -> str:
    """`value` in NFC; `ValueError` if it holds a character refused above or shows nothing."""
    text = unicodedata.normalize("NFC", value)
    for char in text:
        problem = _refused(char)
        if problem:
            raise ValueError(f"{problem} U+{ord(char):04X} is not allowed")
    if not any(_visible(char) for char in text):
        raise ValueError("must contain a visible character")
    return text


def _refused(char: str) -> str | None:
    category = unicodedata.category(char)
    if category == "Cc":
        return "control character"
    if char in BIDI_CONTROLS:
        return "bidirectional control"
    if category == "Cs":
        return "surrogate"
    if _noncharacter(ord(char)):
        return "noncharacter"
    return None


def _noncharacter(code: int) -> bool:
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


def _visible(char: str) -> bool:
    category = unicodedata.category(char)
    return not (
        char.isspace()
        or char in INVISIBLE_LETTERS
        or category[0] in "MZ"  # marks (alone), separators
        or category in ("Cf", "Cn")  # format characters (zero-width, BOM), unassigned
    )
