"""The buffer of one ``ordered`` page: what each stream has been read to, the items read and
not yet returned, and which reads come next (see `ordered` for the waves it plans)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from dynashard.errors import SortKeyCollisionError
from dynashard.item import Item
from dynashard.keys.key_span import KeySpan
from dynashard.query.capacity import READ_UNIT_BYTES
from dynashard.query.reader import StreamRead
from dynashard.query.sort_range import SortKeyRange
from dynashard.query.streams import PartitionStream

Identity = Callable[[Item], str]
ESTIMATE_STEPS = (1, 8, 64)
"""Waves bounded by the previous page's span: the first where it says the page ends, then
(if that fell short: the density changed) 8 and 64 times as far; then unbounded."""
SPAN_SLACK = 4
"""A wave bounded by an estimate asks each stream for at most this many times its share of
the items wanted: an estimate across a change of radix in the keys (a day boundary in a
timestamp) can land days too far, and the Limit then ends the read instead."""
ITEM_BYTES_GUESS = 1024
"""Item size assumed to fit a page's first wave to its budget, before any item is read."""
MAX_SCALE = 64
"""How many times the items a wave wants it may ask each stream for when a filter passes
few of the items read (a Limit counts the items evaluated, not those that pass)."""


@dataclass
class StreamState:
    index: int
    stream: PartitionStream
    remaining: SortKeyRange
    start_key: Item | None = None
    covered: str | None = None
    real: str | None = None
    """The furthest key this stream has been read to that is a real position (an item's
    key, or DynamoDB's LastEvaluatedKey), unlike `covered`, which may be an estimated
    bound."""
    done: bool = False

    def empty_up_to(self, key: str, descending: bool) -> None:
        """Record that the stream holds nothing more up to `key`: it goes on after it."""
        self.covered = key
        self.remaining = self.remaining.after(key, descending)
        self.done = self.remaining.is_empty()


@dataclass(frozen=True)
class Request:
    state: StreamState
    limit: int
    bound: str | None
    estimated: bool = False
    """Whether `bound` is an estimate (from the previous page's density), not a read key."""


@dataclass
class _Entry:
    key: str
    index: int
    item: Item = field(compare=False)
    descending: bool = field(compare=False)

    def __lt__(self, other: _Entry) -> bool:
        if self.key != other.key:
            return (self.key > other.key) if self.descending else (self.key < other.key)
        return self.index < other.index


def least_units(request: Request) -> float:
    """What a request costs at least: one 4 KB read unit, half of it eventually consistent."""
    return 1.0 if request.state.stream.consistent_read else 0.5


class Merge:
    """The heap of buffered items and the bookkeeping of one page."""

    def __init__(
        self,
        descending: bool,
        identity: Identity | None,
        limit: int,
        *,
        plan_depth: int = 0,
        after: str | None = None,
        span: KeySpan | None = None,
        probes: set[int] | None = None,
    ) -> None:
        self.descending = descending
        self.identity = identity
        self.limit = limit
        self.plan_depth = plan_depth
        """Pages to read ahead of this one for the cursor's plan (0: no plan)."""
        self.after = after
        """The cursor's key: where the first wave starts."""
        self.span = span
        """The previous page's span: where it says this page ends bounds its waves."""
        self.first_key: str | None = None
        self.estimates = 0
        self.probes = probes or set()
        """Streams quiet for `PROBE` pages: the first wave reads each without a bound (for up
        to the items the page misses), so that the cursor learns where its next item is
        (`known`) or that it has ended, and the next pages leave it out until then."""
        self.probed: set[int] = set()
        self.contributors: set[int] = set()
        self.heap: list[_Entry] = []
        self.items: list[Item] = []
        self.seen: set[str] = set()
        self.duplicates = 0
        self.evaluated = 0
        self.passed = 0
        """Items the page's reads evaluated, and those the filter (if any) passed."""
        self.item_bytes = 0
        """The largest item read so far."""
        self.last_key: str | None = None
        self.last_index: int | None = None
        """The stream of the page's last item: the likeliest to hold the next one."""
        self._last_popped: tuple[str, str | None] | None = None

    @property
    def full(self) -> bool:
        return len(self.items) >= self.limit

    def before(self, a: str, b: str) -> bool:
        return a > b if self.descending else a < b

    def finished(self, states: Sequence[StreamState]) -> bool:
        return not self.heap and all(s.done for s in states)

    def has_more(self, states: Sequence[StreamState]) -> bool:
        return self._buffered_beyond() or not all(s.done for s in states)

    def _buffered_beyond(self) -> bool:
        return any(e.key != self.last_key for e in self.heap)

    def settled(self, states: Sequence[StreamState]) -> bool:
        """Whether `has_more` is known: an item past the page is buffered, or every stream
        has ended."""
        return self._buffered_beyond() or all(s.done for s in states)

    def end_wave(self, states: Sequence[StreamState], waves: int) -> list[Request]:
        """A full page with nothing buffered past it and streams not known to have ended:
        read on, until an item turns up or every stream ends, so that `has_more` is exact.
        First one item from the stream of the page's last item (mid-list it nearly always
        holds the next: one request settles it), then from every open stream, 1 item, then
        8 and 64 (a filter may skip many)."""
        open_states = [s for s in states if not s.done]
        likeliest = [s for s in open_states if s.index == self.last_index]
        if waves == 0 and likeliest and len(open_states) > 1:
            return [Request(likeliest[0], 1, None)]
        limit = ESTIMATE_STEPS[min(max(waves - 1, 0), len(ESTIMATE_STEPS) - 1)]
        return [Request(s, limit, None) for s in open_states]

    def horizon(self, states: Sequence[StreamState]) -> tuple[bool, str | None]:
        """Whether every unfinished stream has been read, and the least-read one's position
        (None when all are done): every item up to it is known."""
        unfinished = [s.covered for s in states if not s.done]
        positions = [c for c in unfinished if c is not None]
        horizon = (max if self.descending else min)(positions) if positions else None
        return None not in unfinished, horizon

    def resume_key(self, states: Sequence[StreamState]) -> str | None:
        """Where a page cut short by its budget resumes: the furthest real position (a key
        some stream was read to) up to the frontier, up to which every item has been read
        and (the page not being full) returned; the last returned key where no frontier is
        known. Never the frontier itself when it is an estimated bound (``2026-96...``):
        items written before the next page but behind such a key would never be read."""
        all_read, frontier = self.horizon(states)
        if not all_read or frontier is None:
            return self.last_key
        if self.last_key is not None and self.before(frontier, self.last_key):
            return self.last_key
        real = [s.real for s in states if s.real is not None and not self.before(frontier, s.real)]
        real += [key for key in (self.last_key, self.after) if key is not None]
        if not real:
            return None
        return (max if not self.descending else min)(real)

    def emit_safe(self, states: Sequence[StreamState]) -> None:
        """Pop every item up to the frontier: the least-read unfinished stream's position."""
        all_read, frontier = self.horizon(states)
        if not all_read:
            return
        while not self.full and self.heap:
            if frontier is not None and self.before(frontier, self.heap[0].key):
                return
            self._take(heapq.heappop(self.heap))

    def _take(self, entry: _Entry) -> None:
        ident = self.identity(entry.item) if self.identity else None
        last = self._last_popped
        if last is not None and last[0] == entry.key and (ident is None or ident != last[1]):
            raise SortKeyCollisionError(
                f"sort key {entry.key!r} is shared by different items; "
                "sort keys must be unique per identity"
            )
        self._last_popped = (entry.key, ident)
        if ident is not None and ident in self.seen:
            self.duplicates += 1
            return
        if ident is not None:
            self.seen.add(ident)
        self.items.append(entry.item)
        self.contributors.add(entry.index)
        self.first_key = self.first_key or entry.key
        self.last_key = entry.key
        self.last_index = entry.index

    def next_wave(self, states: Sequence[StreamState]) -> list[Request]:
        """Which unfinished streams to read next, with which Limit and sort-key bound."""
        missing = self.limit - len(self.items)
        ahead = missing + self.plan_depth * self.limit
        open_states = [s for s in states if not s.done]
        keys = self._fresh_keys(ahead)
        if not keys and not missing:
            return []  # a full page with nothing buffered to plan from
        if len(keys) >= missing:
            bound = keys[-1]
            needed = [s for s in open_states if s.covered is None or self.before(s.covered, bound)]
            return [Request(s, ahead, bound) for s in needed]
        reach = self._reach(open_states, ahead)
        if reach is not None:
            needed = [s for s in open_states if s.covered is None or self.before(s.covered, reach)]
            probes, self.probes = {s.index for s in needed if s.index in self.probes}, set()
            self.probed.update(probes)
            quiet_share = self._evaluated(math.ceil(missing / max(1, len(needed))) + 1)
            most = ahead
            if self.plan_depth:  # a read-ahead for a plan: the estimate reaches pages away
                most = min(ahead, SPAN_SLACK * math.ceil(ahead / max(1, len(needed))) + 1)
            most = most if self.plan_depth else self._evaluated(most)
            return [
                Request(s, quiet_share, None)
                if s.index in probes
                else Request(s, most, reach, estimated=True)
                for s in needed
            ]
        share = max(1, math.ceil(ahead / len(open_states)))
        if self.plan_depth:
            share += 1  # fewer streams left short of the plan's key: a smaller second wave
        # The one open stream, asked for all the page misses, gets one more: if it holds no
        # more, DynamoDB ends the read without a LastEvaluatedKey and has_more is exact.
        limit = share + 1 if len(open_states) == 1 else share
        return [Request(s, self._evaluated(limit), None) for s in open_states]

    def _evaluated(self, wanted: int) -> int:
        """The Limit that yields about `wanted` items where a filter passes only some of
        those read (a Limit counts the items evaluated): `wanted` over the share passed so
        far on this page, at most `MAX_SCALE` times it. Key-bounded reads keep their Limit
        (the key ends them), and so do the reads that settle `has_more` (they grow by
        themselves), and the reads of a page that plans (its reads ahead would grow with
        them: on the realistic teams list, a 10 % filter read 40 % more)."""
        if self.plan_depth:
            return wanted
        return math.ceil(wanted / max(self._pass_rate(), 1 / MAX_SCALE))

    def _pass_rate(self) -> float:
        """The share of the items read on this page that the filter passed, counting one
        passed item more than seen (0 of 2 is not a filter that passes nothing)."""
        return (self.passed + 1) / (self.evaluated + 1)

    def _reach(self, open_states: Sequence[StreamState], wanted: int) -> str | None:
        """Where the previous page's density puts the `wanted` items (the page's missing
        ones, and with a plan to make the pages it plans) past what every open stream has
        been read to (the cursor, before any read)."""
        if self.span is None or len(open_states) < 2 or self.estimates == len(ESTIMATE_STEPS):
            return None  # one stream reads exactly with its Limit alone
        all_read, frontier = self.horizon(open_states)
        origin = frontier if all_read else self.after
        if origin is None:
            return None
        self.estimates += 1
        return self.span.reach(
            origin, wanted * ESTIMATE_STEPS[self.estimates - 1], descending=self.descending
        )

    def _fresh_keys(self, count: int) -> list[str]:
        """The keys of the first `count` buffered identities the page has not returned, in
        order (fewer if it holds fewer): the M-th is the key by which M are buffered. Copies
        of one identity count once: counting them apiece put the bound short of the page's
        end, and duplicated lists took extra waves."""
        fresh: set[str] = set()
        keys: list[str] = []
        for entry in sorted(self.heap):
            identity = self.identity(entry.item) if self.identity else entry.key
            if identity not in self.seen and identity not in fresh:
                fresh.add(identity)
                keys.append(entry.key)
                if len(keys) == count:
                    break
        return keys

    def sized(
        self, requests: Sequence[Request], room: float | None, *, first: bool
    ) -> list[Request]:
        """`requests` with Limits cut so that the wave's estimated read units fit `room`;
        none when even one request a stream does not fit (the first wave then runs at one
        read unit a request)."""
        if room is None or not requests:
            return list(requests)
        each = room / len(requests)
        fitted = []
        for request in requests:
            blocks = math.floor(each / least_units(request))
            if blocks < 1 and not first:
                return []
            most = max(1, blocks) * READ_UNIT_BYTES // (self.item_bytes or ITEM_BYTES_GUESS)
            most -= 1  # a read from the cursor's key may take one item more (`read_stream`)
            fitted.append(replace(request, limit=max(1, min(request.limit, most))))
        return fitted

    def absorb(self, request: Request, result: StreamRead) -> None:
        """Buffer a read's items and advance its stream's position."""
        state = request.state
        self.evaluated += result.items_read
        self.passed += len(result.items)
        self.item_bytes = max(self.item_bytes, result.largest_item)
        for item in result.items:
            key = state.stream.sort_value(item)
            heapq.heappush(self.heap, _Entry(key, state.index, item, self.descending))
            state.real = key
        if result.last_evaluated_key is not None:
            state.start_key = result.last_evaluated_key
            state.covered = state.real = result.resume_position
        elif request.bound is not None:
            state.empty_up_to(request.bound, self.descending)
            state.real = state.real if request.estimated else request.bound
            state.start_key = None
        else:
            state.done = True
