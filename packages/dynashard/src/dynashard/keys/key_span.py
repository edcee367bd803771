"""How far into the key space a page reaches, to bound the next page's reads.

Sort keys are strings, but a page's first and last keys still say how much key space its
items took. `KeySpan.reach` turns that into a key about `n` items further on, at the same
density: a read bounded by it returns about the items a page needs instead of `Limit`
items from every stream, most of which lie past the page's end. The estimate never
affects what a page returns, only how much it reads: a bound short of the page's end costs
one more wave, one past it a few more items.

Keys are compared as DynamoDB does (UTF-8 bytes, which is code point order). A key maps to
a number by its first characters after a common prefix, read as mixed-radix digits: where
the span's end has a decimal digit, a letter or anything else, that position counts in
base 10, 26 or 0x110000 (code points). Keys are usually made of runs of digits (dates,
counters) and letters (ids): counting those runs densely makes a step carry as the keys do
("990" comes after "98z" nowhere: "989" does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from os.path import commonprefix

BASE = 0x110000
"""Code points: one digit per character."""
PRECISION = 6
"""Characters compared beyond where the span's keys first differ."""
MAX_SORT_KEY_BYTES = 1024
"""DynamoDB's limit for a sort key, and so for a key condition's value: a longer bound would
be refused, so there is no estimate."""
CARRY = 2
"""Shared characters a step may still change (a page can cross "99" to "98")."""
MARGIN = 1.2
"""How much further than the density says a bound reaches: a short bound costs a wave."""


@dataclass(frozen=True)
class KeySpan:
    """`items` items lay between `start` (exclusive) and `end` (inclusive)."""

    start: str
    end: str
    items: int

    def reach(self, after: str, items: int, *, descending: bool) -> str | None:
        """A key about `items` items after `after` in page order (with `MARGIN`), or None
        when the span says nothing (no width, or keys outside its reach)."""
        prefix = common_prefix(self.start, self.end, after)
        prefix = prefix[: max(0, len(prefix) - CARRY)]  # room to carry into
        width = len(common_prefix(self.start, self.end)) - len(prefix) + PRECISION
        digits = [_Digit.of(c) for c in self.end[len(prefix) : len(prefix) + width]]
        digits += [_Digit(0, BASE)] * (width - len(digits))
        distance = abs(_position(self.end, prefix, digits) - _position(self.start, prefix, digits))
        if not distance or self.items <= 0 or items <= 0:
            return None
        step = math.ceil(distance * items * MARGIN / self.items)
        origin = _position(after, prefix, digits)
        key = _key(origin - step if descending else origin + step, prefix, digits)
        if key is None or (key >= after if descending else key <= after):
            return None
        return key if len(key.encode()) <= MAX_SORT_KEY_BYTES else None


def common_prefix(*keys: str) -> str:
    """What all `keys` begin with, compared character by character (keys here, not paths)."""
    return commonprefix(keys)  # noqa: RUF071


@dataclass(frozen=True)
class _Digit:
    """One position of the mixed-radix number: characters `low` .. `low + radix - 1`."""

    low: int
    radix: int

    @classmethod
    def of(cls, char: str) -> _Digit:
        if char.isascii() and char.isdigit():
            return cls(ord("0"), 10)
        if char.isascii() and char.isalpha():
            return cls(ord("a" if char.islower() else "A"), 26)
        return cls(0, BASE)

    def value(self, char: str) -> int:
        """The digit of `char`, clamped into this position's range."""
        return min(max(ord(char) - self.low, 0), self.radix - 1)

    def char(self, value: int) -> str:
        code = self.low + value
        return chr(0xE000 if 0xD800 <= code <= 0xDFFF else code)  # no surrogates


def _position(key: str, prefix: str, digits: list[_Digit]) -> int:
    value = 0
    chars = key[len(prefix) : len(prefix) + len(digits)].ljust(len(digits), "\0")
    for char, digit in zip(chars, digits, strict=True):
        value = value * digit.radix + digit.value(char)
    return value


def _key(value: int, prefix: str, digits: list[_Digit]) -> str | None:
    if value < 0:
        return None
    chars = []
    for digit in reversed(digits):
        value, remainder = divmod(value, digit.radix)
        chars.append(digit.char(remainder))
    if value:
        return None  # past the last key the positions can express
    return (prefix + "".join(reversed(chars))).split("\0", 1)[0] or None  # no NUL inside


def page_span(start: str, end: str, items: int) -> KeySpan | None:
    """The span of a page of `items` items after `start` up to `end`, its start cut to the
    characters `reach` reads (a smaller cursor); None when it has no width."""
    if items <= 0 or start == end:
        return None
    return KeySpan(start[: len(common_prefix(start, end)) + PRECISION], end, items)
