"""Text people type into titles, names and emails: one Unicode form, nothing invisible or
deceptive.

Composed and decomposed ``é`` are one title after NFC normalization (so they compare and
sort alike). Refused, with a message naming the character: control characters (NUL, ESC,
DEL, CR, LF, TAB: a title is one line), bidirectional controls (``\\u202Eevil.exe`` shows as
``exe.live``), noncharacters, every Default_Ignorable_Code_Point of the Unicode Character
Database (a pinned table, `incidents.unicode_tables`: the combining grapheme joiner, Khmer
and Mongolian invisible vowels and selectors, variation selectors, tag characters, ...)
except where an emoji sequence needs one, and values with nothing visible in them (only
spaces, zero-width characters, a byte-order mark, fillers or lone combining marks).
"""

from __future__ import annotations

import bisect
import unicodedata

from incidents.unicode_tables import DEFAULT_IGNORABLE, EMOJI, FORMAT

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Marks, embeddings, overrides and isolates that reorder how text is shown."""
ZERO_WIDTH_JOINER = "\u200d"
"""Allowed only between two emoji: it joins them into one (a family, a profession)."""
EMOJI_SELECTORS = frozenset("\ufe0e\ufe0f")
"""Text and emoji presentation selectors: allowed only right after an emoji (Emoji=Yes)."""
TAGS = range(0xE0020, 0xE0080)
"""Tag characters (hidden ASCII): allowed only in a flag's tag sequence (U+1F3F4 ... U+E007F)."""
BLACK_FLAG, CANCEL_TAG = "\U0001f3f4", "\U000e007f"
INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Fillers (and the blank braille pattern) that are letters or symbols yet show nothing."""
IN_CONTEXT = frozenset({ZERO_WIDTH_JOINER, *EMOJI_SELECTORS, *map(chr, TAGS)})
"""Refused alone, allowed inside an emoji sequence: a pattern cannot say which, so the
document's pattern lets them through and `clean_text` decides."""


def _in(table: tuple[tuple[int, int], ...], code: int) -> bool:
    """Whether `code` lies in one of the table's sorted inclusive ranges."""
    at = bisect.bisect_right(table, (code, 0x10FFFF)) - 1
    return at >= 0 and table[at][0] <= code <= table[at][1]


def _noncharacter(code: int) -> bool:
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


CONTROLS = ((0x00, 0x1F), (0x7F, 0x9F))
"""General_Category=Cc (stable since Unicode 1.1)."""
SEPARATORS = ((0x2028, 0x2029),)
"""General_Category=Zl and Zp: the line and the paragraph separator."""


def _refused_class(*, lines: bool = True) -> str:
    """Every character refused wherever it stands (the characters of `IN_CONTEXT` aside;
    without `lines`, control characters and line separators too, which `one_line` turns
    into spaces), all planes, as the inside of a regex class, from the tables alone: the
    same on every Python. The Basic Multilingual Plane is written as escapes; characters
    beyond it as themselves (a JSON string carries them as a surrogate pair, which a
    Unicode-aware pattern engine reads back as one code point: ``\\U...`` and
    ``\\u{...}`` have no spelling common to ECMA-262 and Python)."""
    tables = (CONTROLS, SEPARATORS) if lines else ()
    codes = {code for table in (*tables, FORMAT, DEFAULT_IGNORABLE)
             for a, b in table for code in range(a, b + 1)}  # fmt: skip
    codes |= {ord(char) for char in BIDI_CONTROLS | INVISIBLE_LETTERS}
    codes |= set(range(0xFDD0, 0xFDF0))
    codes |= {plane << 16 | low for plane in range(17) for low in (0xFFFE, 0xFFFF)}
    codes -= {ord(char) for char in IN_CONTEXT}
    runs: list[tuple[int, int]] = []
    for code in sorted(codes):
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    return "".join(_spelled(a) if a == b else f"{_spelled(a)}-{_spelled(b)}" for a, b in runs)


def _spelled(code: int) -> str:
    return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)


REFUSED_CLASS = _refused_class()
"""The characters refused wherever they stand, as the inside of a regex class."""
CLEAN_CHARACTERS = f"^[^{REFUSED_CLASS}]*$"
"""The refused characters as a JSON Schema pattern, for the document; `clean_text` is what
enforces (and decides the joiner, the emoji selectors and tags by what surrounds them)."""
FLATTENED_CHARACTERS = f"^[^{_refused_class(lines=False)}]*$"
"""`CLEAN_CHARACTERS` for text made one line first (`one_line`): controls are taken."""
BREAKS = frozenset({"Cc", "Zl", "Zp"})
"""Control characters (tab, newline, NUL, ...) and line and paragraph separators."""
TEXT_RULES = (
    "Stored in Unicode NFC. One line of visible text: no control characters (tab and newline "
    "included), line or paragraph separators, bidirectional controls, noncharacters, "
    "format characters or other default-ignorable code points of the Unicode Character "
    "Database (zero-width space and non-joiner, word joiner, byte-order mark, soft hyphen, "
    "combining grapheme joiner, variation selectors, tag characters, ...) or invisible "
    "fillers; the zero-width joiner only inside an emoji sequence, the presentation "
    "selectors U+FE0E/U+FE0F only after an emoji and tag characters only in a flag; must "
    "contain a visible character."
)


def one_line(value: str) -> str:
    """`value` with each control character and line or paragraph separator as a space: a
    monitoring tool's template (a newline, a tab) made one line instead of refused."""
    return "".join(" " if unicodedata.category(char) in BREAKS else char for char in value)


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
    sequences keep their joiners, presentation selectors and flag tags)."""
    char = text[index]
    category = unicodedata.category(char)
    if category in ("Zl", "Zp"):
        return "line or paragraph separator"
    if char in INVISIBLE_LETTERS:
        return "invisible filler"
    formatting = _in(FORMAT, ord(char))
    if not formatting and not _in(DEFAULT_IGNORABLE, ord(char)):
        return None
    if _emoji_part(text, index):
        return None
    return "invisible format character" if formatting else "invisible character"


def _emoji_part(text: str, index: int) -> bool:
    """Whether the character at `index` is a needed part of an emoji sequence."""
    char = text[index]
    if char == ZERO_WIDTH_JOINER:
        return _joins_emoji(text, index)
    if char in EMOJI_SELECTORS:
        return index > 0 and _in(EMOJI, ord(text[index - 1]))
    return ord(char) in TAGS and _in_flag(text, index)


def _emoji(char: str | None) -> bool:
    """An emoji-like symbol, a skin-tone modifier or the emoji presentation selector."""
    if char is None:
        return False
    return unicodedata.category(char) == "So" or _in(EMOJI, ord(char)) or char == "\ufe0f"


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
        or _in(DEFAULT_IGNORABLE, ord(char))
        or _in(FORMAT, ord(char))  # format characters (zero-width, BOM)
        or category[0] in "MZ"  # marks (alone), separators
    )  # an unassigned code point counts as visible: it shows as a box, and a newer runtime
    # (Python 3.13 on Lambda knows Unicode 15.1, 3.11 here 14.0) may know it as a letter
