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
ZERO_WIDTH_JOINER = "\u200d"
"""Allowed only between two emoji: it joins them into one (a family, a profession)."""
TAGS = range(0xE0020, 0xE0080)
"""Tag characters (hidden ASCII): allowed only in a flag's tag sequence (U+1F3F4 ... U+E007F)."""
BLACK_FLAG, CANCEL_TAG = "\U0001f3f4", "\U000e007f"
INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Fillers (and the blank braille pattern) that are letters or symbols yet show nothing."""


def _bmp_class() -> str:
    """Every refused character of the Basic Multilingual Plane as the inside of a regex
    class: controls, bidirectional controls, noncharacters, format characters (zero-width
    space and non-joiner, word joiner, BOM, soft hyphen, ...; the joiner is refused where
    it joins no emoji, which a pattern cannot say), line and paragraph separators, and the
    invisible fillers."""
    refused = [
        code
        for code in range(0x10000)
        if (_category(code) in ("Cc", "Cf", "Zl", "Zp") and chr(code) != ZERO_WIDTH_JOINER)
        or chr(code) in BIDI_CONTROLS | INVISIBLE_LETTERS
        or _noncharacter(code)
    ]
    runs: list[tuple[int, int]] = []
    for code in refused:
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in runs)


def _category(code: int) -> str:
    return unicodedata.category(chr(code))


def _noncharacter(code: int) -> bool:
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


REFUSED_CLASS = _bmp_class()
"""The refused characters of the Basic Multilingual Plane, as the inside of a regex class."""
CLEAN_CHARACTERS = f"^[^{REFUSED_CLASS}]*$"
"""The refused characters of the Basic Multilingual Plane as a JSON Schema pattern, for the
document; `clean_text` is what enforces (and also refuses astral noncharacters)."""
TEXT_RULES = (
    "Stored in Unicode NFC. One line of visible text: no control characters (tab and newline "
    "included), line or paragraph separators, bidirectional controls, noncharacters, "
    "invisible format characters (zero-width space and non-joiner, word joiner, byte-order "
    "mark, soft hyphen, tag characters) or invisible fillers; the zero-width joiner only "
    "inside an emoji sequence and tag characters only in a flag; must contain a visible "
    "character."
)


def clean_text(value: str) -> str:
    """`value` in NFC; `ValueError` if it holds a character refused above or shows nothing."""
    text = unicodedata.normalize("NFC", value)
    for index, char in enumerate(text):
        problem = _refused(char) or _hidden(text, index)
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


def _hidden(text: str, index: int) -> str | None:
    """Why the character at `index` hides text or breaks the line, if it does (emoji
    sequences keep their joiners, variation selectors and flag tags)."""
    char = text[index]
    category = unicodedata.category(char)
    if category in ("Zl", "Zp"):
        return "line or paragraph separator"
    if char in INVISIBLE_LETTERS:
        return "invisible filler"
    if category != "Cf":
        return None
    if char == ZERO_WIDTH_JOINER and _joins_emoji(text, index):
        return None
    if ord(char) in TAGS and _in_flag(text, index):
        return None
    return "invisible format character"


def _emoji(char: str | None) -> bool:
    """An emoji-like symbol, a skin-tone modifier or the emoji variation selector."""
    if char is None:
        return False
    return unicodedata.category(char) == "So" or 0x1F3FB <= ord(char) <= 0x1F3FF or char == "\ufe0f"


def _joins_emoji(text: str, index: int) -> bool:
    before = text[index - 1] if index > 0 else None
    after = text[index + 1] if index + 1 < len(text) else None
    return _emoji(before) and _emoji(after)


def _in_flag(text: str, index: int) -> bool:
    start = index
    while start > 0 and ord(text[start - 1]) in TAGS:
        start -= 1
    end = index
    while end + 1 < len(text) and ord(text[end + 1]) in TAGS:
        end += 1
    return start > 0 and text[start - 1] == BLACK_FLAG and text[end] == CANCEL_TAG


def _visible(char: str) -> bool:
    category = unicodedata.category(char)
    return not (
        char.isspace()
        or char in INVISIBLE_LETTERS
        or category[0] in "MZ"  # marks (alone), separators
        or category in ("Cf", "Cn")  # format characters (zero-width, BOM), unassigned
    )
