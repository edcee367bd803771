"""The ``ordered`` strategy: an exact k-way merge over streams with adaptive per-stream limits.

Every stream records how far it has been read (``covered``). An item may be returned only
when every unfinished stream has been read at least up to it, so nothing can still come
before it. Reads happen in waves, all streams of a wave concurrently:

1. the first wave asks every stream for a share of the page, ``ceil(page / streams)``,
   or, from page 2 with fewer streams than the page, for what lies up to the key where the
   previous page's density puts this page's end (`key_span`);
2. while the page is not full, let M be what is missing and B the key by which the buffer
   holds M identities not returned yet (copies of one identity count once).
   Only streams not yet read up to B can still contribute, and only with keys before B, so
   each is asked again for at most M items *bounded by B* in its key condition: a refill
   never reads past what the page can use. With fewer than M items buffered the bound is
   estimated again from the span, further, or the missing items are shared out again;
3. a full page with nothing buffered past it reads on (one item from the stream of its last
   item, then from every open stream) until `has_more` is known.

With more streams than the page, one more wave reads every stream on to the key of the next
pages, and the cursor carries their plan (`ordered_state`): those pages read only their
contributing streams. The cursor also counts, per stream, the pages it has been quiet, so
that streams with nothing left are left out.

Sort keys must be unique per identity: equal keys are allowed only for copies of the same
identity (they are adjacent in the merge and deduplicated, the copy from the stream listed
first winning); two identities sharing a key raise `SortKeyCollisionError`."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from contextvars import copy_context
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from dynashard.budget import PageBudget
from dynashard.capacity import READ_UNIT_BYTES, item_size
from dynashard.errors import SortKeyCollisionError
from dynashard.key_span import KeySpan, page_span
from dynashard.ordered_state import (
    ENDED,
    MAX_KNOWN,
    PROBE,
    OrderedState,
    Window,
    plannable_pages,
    separator,
)
from dynashard.page import PageStats
from dynashard.reader import StreamRead, read_stream
from dynashard.retry import RetryPolicy
from dynashard.sort_range import SortKeyRange
from dynashard.streams import Item, Stream

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Identity = Callable[[Item], str]
PLAN_PAGES = 64
"""With more streams than the page, a page reads every stream on to the key of up to this
many pages more (as many as the cursor can carry): every stream is then known that far, and
the cursor plans those pages, each read from its contributing streams only, exactly, in one
round trip, instead of from every stream. A read of a few small items costs what a read of
one costs, so reading deeper per request is nearly free."""
PLAN_SPREAD = 3
"""...but no deeper than this many times streams / page: the wave over every stream is then
spread over enough pages to cost no more per page than the planned pages do."""
ESTIMATE_STEPS = (1, 8, 64)
"""Waves bounded by the previous page's span: the first where it says the page ends, then
(if that fell short: the density changed) 8 and 64 times as far; then unbounded."""
SPAN_ITEMS = 40
"""A span of fewer items says little about the density (10 items: about 30 % either way),
so the next span goes on from it instead of starting afresh."""
SPAN_SLACK = 4
"""A wave bounded by an estimate asks each stream for at most this many times its share of
the items wanted: an estimate across a change of radix in the keys (a day boundary in a
timestamp) can land days too far, and the Limit then ends the read instead."""
KEY_BYTES_GUESS = 32
"""Sort key size assumed for page 1's plan depth, before any key is known."""
ITEM_BYTES_GUESS = 1024
"""Item size assumed to fit a page's first wave to its budget, before any item is read."""
MAX_SCALE = 64
"""How many times the items a wave wants it may ask each stream for when a filter passes
few of the items read (a Limit counts the items evaluated, not those that pass)."""


@dataclass
class _StreamState:
    index: int
    stream: Stream
    remaining: SortKeyRange
    start_key: Item | None = None
    covered: str | None = None
    real: str | None = None
    """The furthest key this stream has been read to that is a real position (an item's
    key, or DynamoDB's LastEvaluatedKey), unlike `covered`, which may be an estimated
    bound."""
    done: bool = False


@dataclass(frozen=True)
class _Request:
    state: _StreamState
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


@dataclass(frozen=True)
class MergeResult:
    """Items of the page, the last returned sort key, whether more may follow, and the plan
    of the next pages (see `ordered_state`)."""

    items: list[Item]
    last_key: str | None
    has_more: bool
    plan: tuple[Window, ...] = ()
    span: KeySpan | None = None
    quiet: tuple[int, ...] = ()
    inherited: bool = False
    """Whether the plan or quiet counts passed on rest on what an earlier page learned."""
    final: bool = False
    """Whether `plan` holds every item left in the list."""
    known: tuple[Window, ...] = ()
    """A page cut by its budget: how far past `last_key` its streams are known to hold
    nothing (`OrderedState.known`)."""


class OrderedMerge:
    """One page of an exact merge; holds no state between pages (the cursor does)."""

    def __init__(
        self,
        client: DynamoDBClient,
        executor: Executor,
        retry: RetryPolicy,
    ) -> None:
        self._client = client
        self._executor = executor
        self._retry = retry

    def page(
        self,
        streams: Sequence[Stream],
        *,
        limit: int,
        descending: bool,
        identity: Identity | None,
        stats: PageStats,
        resume: OrderedState | None = None,
        budget: PageBudget | None = None,
        writes_ahead: bool = False,
    ) -> MergeResult:
        """Read the next `limit` items after the cursor's last key (no `resume`: from the
        start). A plan in `resume` makes the first wave read only the streams its first
        window names; otherwise its span bounds the waves and its quiet counts leave out the
        streams that ended. Once `budget` is spent (checked before every wave after the
        first) the page ends with what is proved in order, and its cursor resumes from the
        frontier: everything up to it has been read, and returned. With `writes_ahead` (new
        items land after the cursor, as in an oldest-first list), no stream is skipped as
        ended and no plan ends the list: a stream that was empty may have an item now."""
        resume = resume or OrderedState("")
        if writes_ahead:
            resume = resume.expecting_writes()
        after = resume.last_key or None
        states = _stream_states(streams, after, descending, resume.quiet)
        wide = len(streams) > limit  # planning spares requests only then
        guided = after is not None and not resume.plan  # by the span (and, narrow, the counts)
        merge = _Merge(
            descending,
            identity,
            limit,
            plan_depth=_plan_depth(len(streams), limit, after),
            after=after,
            span=resume.span if guided else None,
            probes={i for i, q in enumerate(resume.quiet) if q == PROBE}
            if guided and not wide
            else None,
        )
        merge.skip_known(states, resume.known)
        wave = merge.planned_wave(states, resume.plan[0]) if resume.plan else None
        read_ahead = not resume.plan and merge.plan_depth > 0
        planned_more = len(resume.plan) > 1 or (bool(resume.plan) and resume.final)
        self._fill(
            merge,
            states,
            stats,
            wave,
            read_ahead=read_ahead,
            budget=budget,
            settle=not planned_more,
        )
        stats.duplicates_dropped += merge.duplicates
        stats.contributors = len(merge.contributors)
        passed_on = bool(resume.plan) and merge.ends_window(resume.plan[0][0])
        learned = len(streams) > 1 and merge.last_key is not None
        if passed_on:
            plan, final = tuple(resume.plan[1:]), resume.final
        else:
            plan = merge.plan(states) if wide else ()
            final = bool(plan) and merge.holds_the_rest(states, plan)
        ended = passed_on and resume.final and not plan  # the plan's last window: the end
        last_key = merge.resume_key(states) if stats.budget_spent else merge.last_key
        return MergeResult(
            merge.items,
            last_key,
            merge.has_more(states) and not ended,
            plan,
            merge.span_after(resume.span, after),
            merge.quiet(states, resume.quiet) if learned else (),
            inherited=passed_on or ENDED in resume.quiet or bool(resume.known),
            final=final,
            known=()
            if plan or len(streams) < 2
            else merge.known(states, last_key, writes_ahead=writes_ahead),
        )

    def _fill(
        self,
        merge: _Merge,
        states: Sequence[_StreamState],
        stats: PageStats,
        wave: list[_Request] | None,
        *,
        read_ahead: bool,
        budget: PageBudget | None,
        settle: bool,
    ) -> None:
        """Read waves until the page is full, the streams end or the budget is spent; with
        `read_ahead`, once more past a full page, to the key of the pages the cursor can
        plan; with `settle` (the plan does not already say whether more follows), on until
        `has_more` is known."""
        first, end_waves = True, 0
        while True:
            merge.emit_safe(states)
            if merge.finished(states):
                return
            if merge.full:
                if budget is not None and budget.spent(stats):
                    return
                if read_ahead:
                    read_ahead = False
                    wave = merge.next_wave(states)
                    if not wave:  # nothing to read ahead: settle `has_more` instead
                        continue
                elif not settle or merge.settled(states):
                    return
                else:
                    wave, end_waves = merge.end_wave(states, end_waves), end_waves + 1
            elif not first and budget is not None and budget.spent(stats):
                stats.budget_spent = True
                return
            requests = wave or merge.next_wave(states)
            if not requests:
                return
            requests = merge.sized(requests, budget.room(stats) if budget else None, first=first)
            if not requests:  # the wave does not fit what the budget has left
                stats.budget_spent = not merge.full
                return
            self._wave(requests, merge, stats)
            wave, first = None, False

    def _wave(self, requests: list[_Request], merge: _Merge, stats: PageStats) -> None:
        futures = [  # each read in the caller's context (its logging and tracing keys)
            self._executor.submit(copy_context().run, self._read, request, merge.descending)
            for request in requests
        ]
        results = [future.result() for future in futures]
        stats.add_wave([result.requests for result in results])
        for request, result in zip(requests, results, strict=True):
            result.record(stats)
            merge.absorb(request, result)

    def _read(self, request: _Request, descending: bool) -> StreamRead:
        state = request.state
        sort_range = state.remaining
        if request.bound is not None:
            sort_range = sort_range.up_to(request.bound, descending)
        return read_stream(
            self._client,
            self._retry,
            state.index,
            state.stream,
            sort_range=sort_range,
            descending=descending,
            limit=request.limit,
            start_key=state.start_key,
        )


def _stream_states(
    streams: Sequence[Stream], after: str | None, descending: bool, quiet: Sequence[int]
) -> list[_StreamState]:
    """Each stream's range after the cursor; streams the cursor says ended are done."""
    states = []
    for index, stream in enumerate(streams):
        remaining = stream.sort_range.after(after, descending) if after else stream.sort_range
        state = _StreamState(index, stream, remaining)
        state.done = remaining.is_empty() or (bool(quiet) and quiet[index] == ENDED)
        states.append(state)
    return states


def _least_units(request: _Request) -> float:
    """What a request costs at least: one 4 KB read unit, half of it eventually consistent."""
    return 1.0 if request.state.stream.consistent_read else 0.5


def _plan_depth(streams: int, limit: int, after: str | None) -> int:
    """Pages to read ahead for the cursor's plan: none unless streams outnumber the page."""
    if streams <= limit:
        return 0
    key_bytes = len(after.encode()) if after else KEY_BYTES_GUESS
    fits = plannable_pages(limit, streams, key_bytes, PLAN_PAGES)
    return min(fits, math.ceil(PLAN_SPREAD * streams / limit))


class _Merge:
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

    def _before(self, a: str, b: str) -> bool:
        return a > b if self.descending else a < b

    def finished(self, states: Sequence[_StreamState]) -> bool:
        return not self.heap and all(s.done for s in states)

    def has_more(self, states: Sequence[_StreamState]) -> bool:
        return self._buffered_beyond() or not all(s.done for s in states)

    def _buffered_beyond(self) -> bool:
        return any(e.key != self.last_key for e in self.heap)

    def settled(self, states: Sequence[_StreamState]) -> bool:
        """Whether `has_more` is known: an item past the page is buffered, or every stream
        has ended."""
        return self._buffered_beyond() or all(s.done for s in states)

    def end_wave(self, states: Sequence[_StreamState], waves: int) -> list[_Request]:
        """A full page with nothing buffered past it and streams not known to have ended:
        read on, until an item turns up or every stream ends, so that `has_more` is exact.
        First one item from the stream of the page's last item (mid-list it nearly always
        holds the next: one request settles it), then from every open stream, 1 item, then
        8 and 64 (a filter may skip many)."""
        open_states = [s for s in states if not s.done]
        likeliest = [s for s in open_states if s.index == self.last_index]
        if waves == 0 and likeliest and len(open_states) > 1:
            return [_Request(likeliest[0], 1, None)]
        limit = ESTIMATE_STEPS[min(max(waves - 1, 0), len(ESTIMATE_STEPS) - 1)]
        return [_Request(s, limit, None) for s in open_states]

    def _horizon(self, states: Sequence[_StreamState]) -> tuple[bool, str | None]:
        """Whether every unfinished stream has been read, and the least-read one's position
        (None when all are done): every item up to it is known."""
        unfinished = [s.covered for s in states if not s.done]
        positions = [c for c in unfinished if c is not None]
        horizon = (max if self.descending else min)(positions) if positions else None
        return None not in unfinished, horizon

    def resume_key(self, states: Sequence[_StreamState]) -> str | None:
        """Where a page cut short by its budget resumes: the furthest real position (a key
        some stream was read to) up to the frontier, up to which every item has been read
        and (the page not being full) returned; the last returned key where no frontier is
        known. Never the frontier itself when it is an estimated bound (``2026-96...``):
        items written before the next page but behind such a key would never be read."""
        all_read, frontier = self._horizon(states)
        if not all_read or frontier is None:
            return self.last_key
        if self.last_key is not None and self._before(frontier, self.last_key):
            return self.last_key
        real = [s.real for s in states if s.real is not None and not self._before(frontier, s.real)]
        real += [key for key in (self.last_key, self.after) if key is not None]
        if not real:
            return None
        return (max if not self.descending else min)(real)

    def emit_safe(self, states: Sequence[_StreamState]) -> None:
        """Pop every item up to the frontier: the least-read unfinished stream's position."""
        all_read, frontier = self._horizon(states)
        if not all_read:
            return
        while not self.full and self.heap:
            if frontier is not None and self._before(frontier, self.heap[0].key):
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

    def next_wave(self, states: Sequence[_StreamState]) -> list[_Request]:
        """Which unfinished streams to read next, with which Limit and sort-key bound."""
        missing = self.limit - len(self.items)
        ahead = missing + self._plannable() * self.limit
        open_states = [s for s in states if not s.done]
        keys = self._fresh_keys(ahead)
        if not keys and not missing:
            return []  # a full page with nothing buffered to plan from
        if len(keys) >= missing:
            bound = keys[-1]
            needed = [s for s in open_states if s.covered is None or self._before(s.covered, bound)]
            return [_Request(s, ahead, bound) for s in needed]
        reach = self._reach(open_states, ahead)
        if reach is not None:
            needed = [s for s in open_states if s.covered is None or self._before(s.covered, reach)]
            probes, self.probes = {s.index for s in needed if s.index in self.probes}, set()
            self.probed.update(probes)
            quiet_share = self._evaluated(math.ceil(missing / max(1, len(needed))) + 1)
            most = ahead
            if self.plan_depth:  # a read-ahead for a plan: the estimate reaches pages away
                most = min(ahead, SPAN_SLACK * math.ceil(ahead / max(1, len(needed))) + 1)
            most = most if self.plan_depth else self._evaluated(most)
            return [
                _Request(s, quiet_share, None)
                if s.index in probes
                else _Request(s, most, reach, estimated=True)
                for s in needed
            ]
        share = max(1, math.ceil(ahead / len(open_states)))
        if self.plan_depth:
            share += 1  # fewer streams left short of the plan's key: a smaller second wave
        # The one open stream, asked for all the page misses, gets one more: if it holds no
        # more, DynamoDB ends the read without a LastEvaluatedKey and has_more is exact.
        limit = share + 1 if len(open_states) == 1 else share
        return [_Request(s, self._evaluated(limit), None) for s in open_states]

    def _plannable(self) -> int:
        """Pages to read ahead for the plan: `plan_depth`, times the share of items a filter
        passes (planning saves requests; past a selective filter the items read cost more
        than the requests saved)."""
        rate = self.passed / self.evaluated if self.evaluated else 1.0
        return math.floor(self.plan_depth * rate)

    def _evaluated(self, wanted: int) -> int:
        """The Limit that yields about `wanted` items where a filter passes only some of
        those read (a Limit counts the items evaluated): `wanted` over the share passed so
        far on this page, at most `MAX_SCALE` times it. Key-bounded reads keep their Limit
        (the key ends them), and so do the reads that settle `has_more` (they grow by
        themselves)."""
        rate = self.passed / self.evaluated if self.evaluated else 1.0
        return math.ceil(wanted / max(rate, 1 / MAX_SCALE))

    def _reach(self, open_states: Sequence[_StreamState], wanted: int) -> str | None:
        """Where the previous page's density puts the `wanted` items (the page's missing
        ones, and with a plan to make the pages it plans) past what every open stream has
        been read to (the cursor, before any read)."""
        if self.span is None or len(open_states) < 2 or self.estimates == len(ESTIMATE_STEPS):
            return None  # one stream reads exactly with its Limit alone
        all_read, frontier = self._horizon(open_states)
        origin = frontier if all_read else self.after
        if origin is None:
            return None
        self.estimates += 1
        return self.span.reach(
            origin, wanted * ESTIMATE_STEPS[self.estimates - 1], descending=self.descending
        )

    def planned_wave(self, states: Sequence[_StreamState], window: Window) -> list[_Request]:
        """The first wave of a planned page: streams outside the window are known to hold
        nothing up to its end; those inside are read up to it."""
        end, members = window
        inside = set(members)
        for state in states:
            if state.index not in inside and not state.done:
                state.covered = end
                state.remaining = state.remaining.after(end, self.descending)
                state.done = state.remaining.is_empty()
        return [
            _Request(s, self.limit + 1, end) for s in states if s.index in inside and not s.done
        ]

    def skip_known(self, states: Sequence[_StreamState], known: Sequence[Window]) -> None:
        """Start each stream where the cursor's `known` windows say it holds nothing up to:
        past the end of the last of the leading windows that do not name it."""
        named: set[int] = set()
        for end, members in known:
            named.update(members)
            for state in states:
                if state.index not in named and not state.done:
                    state.covered = state.real = end
                    state.remaining = state.remaining.after(end, self.descending)
                    state.done = state.remaining.is_empty()

    def known(
        self, states: Sequence[_StreamState], resume: str | None, *, writes_ahead: bool
    ) -> tuple[Window, ...]:
        """What this page proved past `resume` (where the next page starts), for the next
        page: how far each stream holds nothing. A stream read to its end holds nothing at
        all; one with items buffered past `resume`, nothing before the first of them
        (newest first: the key just after it, ``key + "\\x00"``); another, nothing up to where
        it was read (with `writes_ahead`, only up to a real position: an item written later
        may land behind an estimated bound). Reaches are rounded down to at most `MAX_KNOWN`
        keys; window k names the streams not known to reach its end."""
        if resume is None:
            return ()
        reach = self._reaches(states, resume, writes_ahead)
        ends = sorted({r for r in reach.values() if r is not None}, reverse=self.descending)
        if len(ends) > MAX_KNOWN:
            ends = [ends[(i + 1) * len(ends) // MAX_KNOWN - 1] for i in range(MAX_KNOWN)]
        windows: list[Window] = []
        for end in ends:
            members = tuple(
                s.index
                for s in states
                if s.index not in reach
                or (reach[s.index] is not None and self._before(reach[s.index] or "", end))
            )
            windows.append((end, members))
        return tuple(windows)

    def _reaches(
        self, states: Sequence[_StreamState], resume: str, writes_ahead: bool
    ) -> dict[int, str | None]:
        """Per stream known to hold nothing past `resume` for a while: up to which key
        (None: to its end). See `known`."""
        first_buffered: dict[int, str] = {}
        for entry in sorted(self.heap):
            if entry.key != resume:
                first_buffered.setdefault(entry.index, entry.key)
        reach: dict[int, str | None] = {}
        for state in states:
            buffered = first_buffered.get(state.index)
            if buffered is not None:
                position: str | None = buffered + "\x00" if self.descending else None
            elif state.done:
                reach[state.index] = None
                continue
            else:
                position = state.real if writes_ahead else state.covered
            if position is not None and self._before(resume, position):
                reach[state.index] = position
        return reach

    def plan(self, states: Sequence[_StreamState]) -> tuple[Window, ...]:
        """Whole pages the buffer already holds beyond this one, up to the horizon (the
        least-read unfinished stream's position, up to which every item is known)."""
        all_read, horizon = self._horizon(states)
        if not self.full or not all_read:
            return ()
        windows: list[Window] = []
        identities: set[str] = set()
        members: set[int] = set()
        end = ""
        for entry in sorted(self.heap):
            if entry.key == self.last_key:
                continue  # copies of the page's last item
            if horizon is not None and self._before(horizon, entry.key):
                break
            if len(identities) == self.limit and entry.key != end:
                cut = separator(end, entry.key, inclusive=False, descending=self.descending)
                windows.append((cut, tuple(sorted(members))))
                identities, members = set(), set()
            identity = self.identity(entry.item) if self.identity else entry.key
            if identity not in identities:  # the copy that wins; the others need no read
                identities.add(identity)
                members.add(entry.index)
            end = entry.key
        if len(identities) == self.limit:
            cut = separator(end, horizon, inclusive=True, descending=self.descending)
            windows.append((cut, tuple(sorted(members))))
        return tuple(windows)

    def span_after(self, previous: KeySpan | None, after: str | None) -> KeySpan | None:
        """This page's key span for the next page, going on from `previous` while that
        holds too few items to go by alone."""
        if self.last_key is None or self.first_key is None:
            return None
        start, counted = after or self.first_key, len(self.items) - (0 if after else 1)
        if previous is not None and previous.items < SPAN_ITEMS:
            start, counted = previous.start, counted + previous.items
        return page_span(start, self.last_key, counted)

    def quiet(self, states: Sequence[_StreamState], previous: Sequence[int]) -> tuple[int, ...]:
        """Per stream, for the next page: `ENDED` when it has nothing after this page, 0 when
        it supplied an item, else one more quiet page than before (up to `PROBE`)."""
        pending = {e.index for e in self.heap if e.key != self.last_key}
        counts = []
        for state in states:
            if state.done and state.index not in pending:
                counts.append(ENDED)
            elif state.index in self.contributors or state.index in self.probed:
                counts.append(0)  # supplied an item, or was read to its next one
            else:
                counts.append(min(PROBE, (previous[state.index] if previous else 0) + 1))
        return tuple(counts)

    def holds_the_rest(self, states: Sequence[_StreamState], plan: Sequence[Window]) -> bool:
        """Whether `plan` holds every item left: every stream was read to its end, and the
        items buffered beyond this page fill the windows exactly."""
        if not all(s.done for s in states):
            return False
        rest = {
            self.identity(e.item) if self.identity else e.key
            for e in self.heap
            if e.key != self.last_key
        }
        return len(rest) == len(plan) * self.limit

    def ends_window(self, end: str) -> bool:
        """Whether the page returned a planned window whole: full, not past its end, and
        nothing buffered left in it (a write since the plan can shift a window)."""
        if not self.full or self.last_key is None or self._before(end, self.last_key):
            return False
        return all(e.key == self.last_key or self._before(end, e.key) for e in self.heap)

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
        self, requests: Sequence[_Request], room: float | None, *, first: bool
    ) -> list[_Request]:
        """`requests` with Limits cut so that the wave's estimated read units fit `room`;
        none when even one request a stream does not fit (the first wave then runs at one
        read unit a request)."""
        if room is None or not requests:
            return list(requests)
        each = room / len(requests)
        fitted = []
        for request in requests:
            blocks = math.floor(each / _least_units(request))
            if blocks < 1 and not first:
                return []
            most = max(1, blocks) * READ_UNIT_BYTES // (self.item_bytes or ITEM_BYTES_GUESS)
            most -= 1  # a read from the cursor's key may take one item more (`read_stream`)
            fitted.append(replace(request, limit=max(1, min(request.limit, most))))
        return fitted

    def absorb(self, request: _Request, result: StreamRead) -> None:
        """Buffer a read's items and advance its stream's position."""
        state = request.state
        self.evaluated += result.items_read
        self.passed += len(result.items)
        self.item_bytes = max([self.item_bytes, *map(item_size, result.items)])
        for item in result.items:
            key = state.stream.sort_value(item)
            heapq.heappush(self.heap, _Entry(key, state.index, item, self.descending))
            state.real = key
        if result.last_evaluated_key is not None:
            state.start_key = result.last_evaluated_key
            state.covered = state.real = result.resume_position
        elif request.bound is not None:
            state.covered = request.bound
            state.real = state.real if request.estimated else request.bound
            state.start_key = None
            state.remaining = state.remaining.after(request.bound, self.descending)
            state.done = state.remaining.is_empty()
        else:
            state.done = True
