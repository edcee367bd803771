"""Sort-key ranges: the caller's condition, narrowed by cursors and refill bounds.

DynamoDB takes one sort-key condition per Query, so a caller's ``begins_with`` and a
cursor's "strictly after" must become one condition. A range is kept as two optional
bounds (plus the prefix, if any) and rendered as the tightest single DynamoDB condition;
ends that DynamoDB cannot express (an exclusive end inside ``BETWEEN``) are enforced on
the client by `SortKeyRange.contains`, at the cost of reading at most one boundary item.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)


@dataclass(frozen=True)
class Bound:
    """One end of a range: a sort-key value and whether it is included."""

    value: str
    inclusive: bool


def prefix_successor(prefix: str) -> str | None:
    """Smallest string greater than every string starting with `prefix` (None: no such string).

    Python compares str by code point, which is also UTF-8 byte order (DynamoDB's order).
    """
    stripped = prefix
    while stripped:
        last = ord(stripped[-1])
        if last < _MAX_CODE_POINT:
            following = last + 1
            if following in _SURROGATES:
                following = _SURROGATES.stop
            return stripped[:-1] + chr(following)
        stripped = stripped[:-1]
    return None


@dataclass(frozen=True)
class SortKeyRange:
    """A set of sort-key values: ``lower``/``upper`` bounds and an optional required prefix."""

    lower: Bound | None = None
    upper: Bound | None = None
    prefix: str | None = None

    @classmethod
    def begins_with(cls, prefix: str) -> SortKeyRange:
        """Keys starting with `prefix`."""
        successor = prefix_successor(prefix)
        upper = Bound(successor, False) if successor is not None else None
        return cls(Bound(prefix, True), upper, prefix)

    @classmethod
    def between(cls, low: str, high: str) -> SortKeyRange:
        """Keys from `low` to `high`, both included (DynamoDB's BETWEEN)."""
        return cls(Bound(low, True), Bound(high, True))

    @classmethod
    def equal_to(cls, value: str) -> SortKeyRange:
        """Exactly `value`."""
        return cls.between(value, value)

    @classmethod
    def greater_than(cls, value: str, inclusive: bool = False) -> SortKeyRange:
        """Keys after `value` (``>=`` with `inclusive`)."""
        return cls(lower=Bound(value, inclusive))

    @classmethod
    def less_than(cls, value: str, inclusive: bool = False) -> SortKeyRange:
        """Keys before `value` (``<=`` with `inclusive`)."""
        return cls(upper=Bound(value, inclusive))

    def contains(self, key: str) -> bool:
        """Whether `key` belongs to the range (the client-side half of the condition)."""
        if self.prefix is not None and not key.startswith(self.prefix):
            return False
        if self.lower and (
            key < self.lower.value or (key == self.lower.value and not self.lower.inclusive)
        ):
            return False
        return not (
            self.upper
            and (key > self.upper.value or (key == self.upper.value and not self.upper.inclusive))
        )

    def past_end(self, key: str, descending: bool) -> bool:
        """Whether no key of the range comes after `key` in the read direction."""
        end = self.lower if descending else self.upper
        if end is None:
            return False
        if key == end.value:
            return not end.inclusive
        return key < end.value if descending else key > end.value

    def is_empty(self) -> bool:
        """True when no key can satisfy both bounds."""
        if self.lower is None or self.upper is None:
            return False
        if self.lower.value == self.upper.value:
            return not (self.lower.inclusive and self.upper.inclusive)
        return self.lower.value > self.upper.value

    def reads_start_boundary(self, descending: bool) -> bool:
        """Whether a Query of the range returns the excluded item at its start: an exclusive
        start rendered inside ``BETWEEN`` (both ends set), which DynamoDB has inclusive only."""
        start = self.upper if descending else self.lower
        both = self.lower is not None and self.upper is not None
        return both and start is not None and not start.inclusive

    def after(self, position: str, descending: bool) -> SortKeyRange:
        """The part of the range strictly after `position` in the read direction."""
        if descending:
            return self._with_upper(Bound(position, False))
        return self._with_lower(Bound(position, False))

    def up_to(self, position: str, descending: bool) -> SortKeyRange:
        """The part of the range up to and including `position` in the read direction."""
        if descending:
            return self._with_lower(Bound(position, True))
        return self._with_upper(Bound(position, True))

    def narrowed(self, lower: Bound | None = None, upper: Bound | None = None) -> SortKeyRange:
        """This range cut to `lower` and `upper` where they are tighter than its own ends."""
        narrowed = self._with_lower(lower) if lower else self
        return narrowed._with_upper(upper) if upper else narrowed

    def _with_lower(self, bound: Bound) -> SortKeyRange:
        current = self.lower
        if (
            current is None
            or bound.value > current.value
            or (bound.value == current.value and not bound.inclusive)
        ):
            return replace(self, lower=bound)
        return self

    def _with_upper(self, bound: Bound) -> SortKeyRange:
        current = self.upper
        if (
            current is None
            or bound.value < current.value
            or (bound.value == current.value and not bound.inclusive)
        ):
            return replace(self, upper=bound)
        return self

    def key_condition(self, attribute: str, value_prefix: str) -> tuple[str | None, dict[str, str]]:
        """The one DynamoDB sort-key condition covering the range, and its string values.

        `attribute` is the expression name to compare (e.g. ``#sk``); value placeholders
        start with `value_prefix`. Returns ``(None, {})`` when the range is unbounded.
        """
        low, high = f"{value_prefix}lo", f"{value_prefix}hi"
        if self.prefix is not None and self == SortKeyRange.begins_with(self.prefix):
            return f"begins_with({attribute}, {low})", {low: self.prefix}
        if self.lower and self.upper:
            if self.lower.value == self.upper.value:
                return f"{attribute} = {low}", {low: self.lower.value}
            return f"{attribute} BETWEEN {low} AND {high}", {
                low: self.lower.value,
                high: self.upper.value,
            }
        if self.lower:
            operator = ">=" if self.lower.inclusive else ">"
            return f"{attribute} {operator} {low}", {low: self.lower.value}
        if self.upper:
            operator = "<=" if self.upper.inclusive else "<"
            return f"{attribute} {operator} {high}", {high: self.upper.value}
        return None, {}
