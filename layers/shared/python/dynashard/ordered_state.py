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

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from dynashard.errors import InvalidCursorError
from dynashard.streams import Stream

Window = tuple[str, tuple[int, ...]]
"""A planned page: its last sort key and the indexes of the streams holding its items."""
MAX_STATE_BYTES = 680
"""Plans are cut to keep the whole cursor under 1,024 characters."""


@dataclass(frozen=True)
class OrderedState:
    """The last key returned, the plan for the next pages and the streams it refers to."""

    last_key: str
    plan: tuple[Window, ...] = ()
    streams: str = ""

    def dumps(self) -> str:
        """Compact JSON, with as many planned windows as fit `MAX_STATE_BYTES`."""
        windows: list[list[object]] = []
        for end, members in self.plan:
            candidate: list[list[object]] = [*windows, [end, list(members)]]
            if len(self._json(candidate).encode()) > MAX_STATE_BYTES:
                break
            windows = candidate
        return self._json(windows)

    def _json(self, windows: list[list[object]]) -> str:
        body = [self.last_key, self.streams, windows] if windows else [self.last_key]
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def loads(cls, text: str, streams: int) -> OrderedState:
        """Parse a cursor's state; plan indexes must name streams of the query."""
        try:
            last_key, *rest = json.loads(text)
            digest, windows = rest if rest else ("", [])
            plan = tuple((str(end), tuple(int(i) for i in members)) for end, members in windows)
        except (ValueError, TypeError) as exc:
            raise InvalidCursorError("the cursor is malformed") from exc
        if not isinstance(last_key, str) or not all(
            0 <= i < streams for _, members in plan for i in members
        ):
            raise InvalidCursorError("the cursor does not match this query's streams")
        return cls(last_key, plan, str(digest))


def streams_digest(streams: Sequence[Stream]) -> str:
    """What identifies a stream list, for a plan that names streams by index."""
    text = "\n".join(stream.fingerprint() for stream in streams)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
