"""The ``round_robin`` strategy: fair and unordered, one DynamoDB page per stream in turn.

This is ConductorOne's choice: no stream waits for another, and a page is filled by
visiting streams cyclically, each serving up to what the page still misses. Its cursor
must remember where each started stream stopped, so unlike the ``ordered`` cursor it
grows with the number of *started, unfinished* streams.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dynashard.errors import InvalidCursorError
from dynashard.page import PageStats
from dynashard.reader import read_stream
from dynashard.retry import RetryPolicy
from dynashard.streams import Item, Stream

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass
class RoundRobinState:
    """Next stream to visit, where each started stream stopped, and which are finished."""

    next_stream: int = 0
    positions: dict[int, str] = field(default_factory=dict)
    finished: set[int] = field(default_factory=set)

    def dumps(self) -> str:
        """Compact JSON for the cursor."""
        return json.dumps(
            [self.next_stream, sorted(self.positions.items()), sorted(self.finished)],
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, text: str, streams: int) -> RoundRobinState:
        """Parse a cursor's state, checking it against the number of streams."""
        try:
            next_stream, positions, finished = json.loads(text)
            state = cls(int(next_stream), {int(i): str(k) for i, k in positions}, set(finished))
        except (ValueError, TypeError) as exc:
            raise InvalidCursorError("the cursor is malformed") from exc
        indexes = {state.next_stream, *state.positions, *state.finished}
        if not all(isinstance(i, int) and 0 <= i < streams for i in indexes):
            raise InvalidCursorError("the cursor does not match this query's streams")
        return state


def round_robin_page(
    client: DynamoDBClient,
    retry: RetryPolicy,
    streams: Sequence[Stream],
    *,
    limit: int,
    descending: bool,
    state: RoundRobinState,
    stats: PageStats,
) -> tuple[list[Item], RoundRobinState | None]:
    """Fill a page by visiting streams in turn; returns the items and the state to resume."""
    items: list[Item] = []
    turn = state.next_stream
    while len(items) < limit and len(state.finished) < len(streams):
        if turn not in state.finished:
            stream = streams[turn]
            position = state.positions.get(turn)
            sort_range = (
                stream.sort_range.after(position, descending) if position else stream.sort_range
            )
            read = read_stream(
                client,
                retry,
                turn,
                stream,
                sort_range=sort_range,
                descending=descending,
                limit=limit - len(items),
            )
            read.record(stats)
            stats.round_trips += 1
            stats.requests_per_wave.append(1)
            items += read.items
            resume = read.resume_position
            if resume is None:
                state.finished.add(turn)
                state.positions.pop(turn, None)
            else:
                state.positions[turn] = resume
        turn = (turn + 1) % len(streams)
    state.next_stream = turn
    return items, (state if len(state.finished) < len(streams) else None)
