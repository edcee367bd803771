"""The ``round_robin`` strategy: fair and unordered, one DynamoDB page per stream in turn.

This is ConductorOne's choice: no stream waits for another, and a page is filled by
visiting streams cyclically, each serving up to what the page still misses. The cursor
must remember where each started stream stopped, so streams are opened in index order into
a window of at most `MAX_OPEN_STREAMS` (fewer if their sort keys are long): the cycle is
fair within the window, a finished stream makes room for the next, and the cursor stays
bounded (under 1 KB at 1,024 streams with typical keys; always under the codec's limit).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from dynashard.errors import InvalidCursorError
from dynashard.item import Item
from dynashard.query.page import PageStats
from dynashard.query.reader import Read, Waves
from dynashard.query.streams import PartitionStream

MAX_OPEN_STREAMS = 8
"""Streams started and not finished at once: the window round robin cycles over."""
STATE_BUDGET_BYTES = 2900
"""The cursor state stays under this, so a token stays under the codec's 4,096 characters:
a stream is started only while one more sort key of the maximum size (1,024 bytes) fits."""
MAX_SORT_KEY_BYTES = 1024
_HEAD = struct.Struct(">II")
_ENTRY = struct.Struct(">IH")


@dataclass
class RoundRobinState:
    """Where round robin goes on: the next stream to visit, the next one never started, and
    the position of each open one. Streams start in index order, so every stream below
    `next_new` that is not open is finished: the state holds at most `MAX_OPEN_STREAMS`
    positions, whatever the number of streams."""

    turn: int = 0
    next_new: int = 0
    open: dict[int, str] = field(default_factory=dict)

    def dumps(self) -> bytes:
        """Binary for the cursor: turn and next stream (4 bytes each), then per open stream
        its index (4 bytes), its key's length (2 bytes) and the key in UTF-8. A key costs its
        own bytes whatever it holds (as JSON, a control character took six)."""
        parts = [_HEAD.pack(self.turn, self.next_new)]
        for index, key in sorted(self.open.items()):
            raw = key.encode("utf-8", "surrogatepass")
            parts += [_ENTRY.pack(index, len(raw)), raw]
        return b"".join(parts)

    @classmethod
    def loads(cls, data: bytes, streams: int) -> RoundRobinState:
        """Parse a cursor's state, checking it against the number of streams."""
        try:
            turn, next_new = _HEAD.unpack_from(data)
            offset, open_ = _HEAD.size, {}
            while offset < len(data):
                index, size = _ENTRY.unpack_from(data, offset)
                offset += _ENTRY.size
                if offset + size > len(data):
                    raise ValueError("a key runs past the state")
                open_[index] = data[offset : offset + size].decode("utf-8", "surrogatepass")
                offset += size
        except (struct.error, ValueError) as exc:
            raise InvalidCursorError("the cursor is malformed") from exc
        state = cls(turn, next_new, open_)
        valid = 0 <= state.turn <= streams and 0 <= state.next_new <= streams
        if not (valid and all(0 <= i < state.next_new for i in state.open)):
            raise InvalidCursorError("the cursor does not match this query's streams")
        return state

    def can_start(self, streams: int) -> bool:
        """Whether a new stream may join the window (count and cursor size allow it)."""
        room = len(self.dumps()) + _ENTRY.size + MAX_SORT_KEY_BYTES <= STATE_BUDGET_BYTES
        return self.next_new < streams and len(self.open) < MAX_OPEN_STREAMS and room

    def next_stream(self, streams: int) -> int | None:
        """The stream to visit: the first open or startable one from `turn` on, cyclically."""
        candidates = sorted(self.open) + ([self.next_new] if self.can_start(streams) else [])
        if not candidates:
            return None
        return next((i for i in candidates if i >= self.turn), candidates[0])


def round_robin_page(
    streams: Sequence[PartitionStream],
    *,
    limit: int,
    descending: bool,
    state: RoundRobinState,
    stats: PageStats,
) -> Waves[tuple[list[Item], RoundRobinState | None]]:
    """Fill a page by visiting streams in turn, one read a wave; returns the items and the
    state to resume."""
    items: list[Item] = []
    contributed: set[int] = set()
    while len(items) < limit and (turn := state.next_stream(len(streams))) is not None:
        stream = streams[turn]
        position = state.open.get(turn)
        sort_range = (
            stream.sort_range.after(position, descending) if position else stream.sort_range
        )
        (read,) = yield [Read(turn, stream, sort_range, descending, limit - len(items))]
        read.record(stats)
        stats.add_wave([read.requests])
        wanted = limit - len(items)
        items += read.items[:wanted]
        if read.items:
            contributed.add(turn)
        resume = read.resume_position
        if len(read.items) > wanted:  # the boundary's spare slot held an item: keep it
            resume = stream.sort_value(read.items[wanted - 1])
        state.next_new = max(state.next_new, turn + 1)
        if resume is None:
            state.open.pop(turn, None)
        else:
            state.open[turn] = resume
        state.turn = turn + 1
    stats.contributors = len(contributed)
    finished = not state.open and state.next_new >= len(streams)
    return items, (None if finished else state)
