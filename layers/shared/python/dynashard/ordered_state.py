"""What an ``ordered`` cursor carries: the last key returned and, when it fits, a plan.

A page's merge knows every item of every stream up to its *horizon* (the least-read
unfinished stream's position). The items it holds beyond the page, up to the horizon, are
therefore exactly the next pages: the plan cuts them into windows of one page each, and
for each window records its last key and the streams holding an item in it. A page read
from a plan queries only those streams, bounded by the window: one round trip, one request
per contributing stream. A plan only fits the stream list it was made for (a digest of the
streams says which); with another list, or once its windows are used up, the next page
reads every stream again and makes a new plan.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass

from dynashard.errors import InvalidCursorError

Window = tuple[str, tuple[int, ...]]
"""A planned page: its last sort key and the indexes of the streams holding its items."""
MAX_STATE_BYTES = 660
"""Plans are cut to keep the whole cursor under 1,024 characters."""
PLAN_SECONDS = 60
"""How long a plan is trusted. An item written into a planned page's key span, in a stream
the plan does not list, is only seen once the plan is dropped: plans are for a reader paging
now, and a cursor kept longer reads every stream again."""


@dataclass(frozen=True)
class OrderedState:
    """The last key returned, the plan for the next pages and the streams it refers to."""

    last_key: str
    plan: tuple[Window, ...] = ()
    streams: str = ""
    made_at: int = 0
    """When the plan was made (epoch seconds): a plan older than `PLAN_SECONDS` is not used."""

    def usable_plan(self, digest: str, now: float) -> tuple[Window, ...]:
        """The plan, if it was made for these streams and recently enough."""
        fresh = 0 <= now - self.made_at <= PLAN_SECONDS
        return self.plan if self.streams == digest and fresh else ()

    def dumps(self) -> str:
        """Compact JSON, with as many planned windows as fit `MAX_STATE_BYTES`."""
        windows: list[list[object]] = []
        for end, members in self.plan:
            candidate: list[list[object]] = [*windows, [end, encode_members(members)]]
            if len(self._json(candidate).encode()) > MAX_STATE_BYTES:
                break
            windows = candidate
        return self._json(windows)

    def _json(self, windows: list[list[object]]) -> str:
        body = [self.last_key, self.streams, windows, self.made_at] if windows else [self.last_key]
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def loads(cls, text: str, streams: int) -> OrderedState:
        """Parse a cursor's state; plan indexes must name streams of the query."""
        try:
            last_key, *rest = json.loads(text)
            digest, windows, made_at = rest if rest else ("", [], 0)
            plan = tuple((str(end), decode_members(members)) for end, members in windows)
        except (ValueError, TypeError, binascii.Error) as exc:
            raise InvalidCursorError("the cursor is malformed") from exc
        if not isinstance(last_key, str) or not all(
            0 <= i < streams for _, members in plan for i in members
        ):
            raise InvalidCursorError("the cursor does not match this query's streams")
        return cls(last_key, plan, str(digest), int(made_at))


def encode_members(members: Sequence[int]) -> list[int] | str:
    """Stream indexes as a list, or as a base64 bitset where that is shorter."""
    if not members:
        return []
    bits = bytearray((max(members) >> 3) + 1)
    for index in members:
        bits[index >> 3] |= 1 << (index & 7)
    packed = base64.b64encode(bytes(bits)).decode()
    listed = list(members)
    return packed if len(packed) < len(json.dumps(listed)) else listed


def decode_members(value: object) -> tuple[int, ...]:
    """The stream indexes `encode_members` wrote."""
    if isinstance(value, str):
        bits = base64.b64decode(value, validate=True)
        return tuple(i for i in range(len(bits) * 8) if bits[i >> 3] >> (i & 7) & 1)
    if not isinstance(value, list):
        raise TypeError("members must be a list or a bitset")
    return tuple(int(i) for i in value)


def plannable_pages(limit: int, streams: int, key_bytes: int, most: int) -> int:
    """How many pages a cursor can plan: each window takes about its last key and its
    streams (a list of up to `limit` indexes, or a bitset of `streams` bits)."""
    members = min(limit * 4, (streams // 8 + 1) * 4 // 3 + 4)
    return max(0, min(most, (MAX_STATE_BYTES - key_bytes - 40) // (key_bytes + members + 6)))
