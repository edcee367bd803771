"""A peer of the ordered merge for the bench: the per-shard-cursor heap merge.

Its cursor holds one sort key per shard (where each shard's returned items end), so it can
continue every shard exactly without re-reading; the price is a cursor that grows with the
shards. Each open shard is asked for ``page // shards + 1`` items; a shard whose buffer runs
dry before the page is full is asked again (another round trip). The first page primes the
shards one after another, as the implementations it is modelled on do.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from dynashard import PartitionStream
from dynashard.query import PageStats, query_read_units
from dynashard.testing import FakeQueryClient


@dataclass
class PerShardMerge:
    """Newest-first pages over `streams`, with a position per shard in the cursor."""

    client: FakeQueryClient
    streams: Sequence[PartitionStream]
    size: int
    positions: dict[int, str] = field(default_factory=dict)
    finished: set[int] = field(default_factory=set)
    primed: bool = False
    _read_to: dict[int, str] = field(default_factory=dict)

    def cursor_chars(self) -> int:
        """Length of the cursor a client would carry (base64 of the JSON positions)."""
        return len(json.dumps(sorted(self.positions.items()))) * 4 // 3

    def page(self) -> tuple[list[str], PageStats]:
        """The next page's keys and its cost."""
        cost = PageStats(streams=len(self.streams), every_request_reported=False)
        self._read_to = {}
        open_ = [i for i in range(len(self.streams)) if i not in self.finished]
        limit = self.size // max(1, len(open_)) + 1
        buffers: dict[int, list[str]] = {}
        more: dict[int, bool] = {}
        self._wave(open_, limit, buffers, more, cost, sequential=not self.primed)
        self.primed = True
        keys: list[str] = []
        while len(keys) < self.size:
            dry = [i for i in open_ if not buffers.get(i) and more.get(i)]
            if dry:
                self._wave(dry, limit, buffers, more, cost, sequential=False)
                continue
            heads = [(buffers[i][0], i) for i in open_ if buffers.get(i)]
            if not heads:
                break
            _, index = max(heads)  # newest first
            key = buffers[index].pop(0)
            keys.append(key)
            self.positions[index] = key
        for index in open_:
            if not buffers.get(index) and not more.get(index):
                self.finished.add(index)
                self.positions.pop(index, None)
        return keys, cost

    def _wave(
        self,
        indexes: Sequence[int],
        limit: int,
        buffers: dict[int, list[str]],
        more: dict[int, bool],
        cost: PageStats,
        *,
        sequential: bool,
    ) -> None:
        for index in indexes:
            stream = self.streams[index]
            after = self._read_to.get(index) or self.positions.get(index)
            sort_range = stream.sort_range.after(after, True) if after else stream.sort_range
            response = self.client.query(**stream.query_request(sort_range, True, limit, None))
            items = response["Items"]
            buffers.setdefault(index, []).extend(item["SK"]["S"] for item in items)
            if items:
                self._read_to[index] = items[-1]["SK"]["S"]
            more[index] = "LastEvaluatedKey" in response
            cost.items_read += len(items)
            cost.modelled_read_units += query_read_units(items, consistent=False)
            cost.requests += 1
            if sequential:
                cost.add_wave([1])
        if not sequential:
            cost.add_wave([1] * len(indexes))
