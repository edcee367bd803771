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
pages, and the cursor carries their plan (`ordered_state`): those pages read only the
streams of the copies they return. Otherwise the cursor carries how far past the page each
stream is known to hold nothing, and counts, per stream, the pages it has been quiet: a
quiet stream is read once without a bound, to its next item, and left out until then.

Before every wave the requests' Limits are cut to fit what the page's `PageBudget` has left
(`budget`); with a filter and fewer streams than the page, unbounded reads ask for what the
page misses over the share of items the filter passes.

Sort keys must be unique per identity: equal keys are allowed only for copies of the same
identity (they are adjacent in the merge and deduplicated, the copy from the stream listed
first winning); two identities sharing a key raise `SortKeyCollisionError`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from dynashard.item import Item
from dynashard.keys.key_span import KeySpan
from dynashard.query.budget import PageBudget
from dynashard.query.ordered.learned import (
    ends_window,
    holds_the_rest,
    known,
    planned_wave,
    quiet,
    skip_known,
    span_after,
)
from dynashard.query.ordered.learned import (
    plan as _plan,
)
from dynashard.query.ordered.merge import Identity, Merge, Request, StreamState
from dynashard.query.ordered.state import ENDED, PROBE, OrderedState, Window, plannable_pages
from dynashard.query.page import PageStats
from dynashard.query.reader import Read, Waves
from dynashard.query.streams import PartitionStream

PLAN_PAGES = 64
"""With more streams than the page, a page reads every stream on to the key of up to this
many pages more (as many as the cursor can carry): every stream is then known that far, and
the cursor plans those pages, each read from its contributing streams only, exactly, in one
round trip, instead of from every stream. A read of a few small items costs what a read of
one costs, so reading deeper per request is nearly free."""
PLAN_SPREAD = 3
"""...but no deeper than this many times streams / page: the wave over every stream is then
spread over enough pages to cost no more per page than the planned pages do."""

KEY_BYTES_GUESS = 32
"""Sort key size assumed for page 1's plan depth, before any key is known."""


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
    """Without a plan: how far past `last_key` the streams are known to hold nothing
    (`OrderedState.known`)."""


def ordered_page(
    streams: Sequence[PartitionStream],
    *,
    limit: int,
    descending: bool,
    identity: Identity | None,
    stats: PageStats,
    resume: OrderedState | None = None,
    budget: PageBudget | None = None,
    writes_ahead: bool = False,
) -> Waves[MergeResult]:
    """One page of the exact merge, as waves of reads any driver runs; the cursor carries
    what it learned, nothing is kept between pages.

    Read the next `limit` items after the cursor's last key (no `resume`: from the
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
    merge = Merge(
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
    skip_known(merge, states, resume.known)
    wave = planned_wave(merge, states, resume.plan[0]) if resume.plan else None
    read_ahead = not resume.plan and merge.plan_depth > 0
    planned_more = len(resume.plan) > 1 or (bool(resume.plan) and resume.final)
    yield from _fill(
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
    passed_on = bool(resume.plan) and ends_window(merge, resume.plan[0][0])
    learned = len(streams) > 1 and merge.last_key is not None
    if passed_on:
        plan, final = tuple(resume.plan[1:]), resume.final
    else:
        plan = _plan(merge, states) if wide else ()
        final = bool(plan) and holds_the_rest(merge, states, plan)
    ended = passed_on and resume.final and not plan  # the plan's last window: the end
    last_key = merge.resume_key(states) if stats.budget_spent else merge.last_key
    return MergeResult(
        merge.items,
        last_key,
        merge.has_more(states) and not ended,
        plan,
        span_after(merge, resume.span, after),
        quiet(merge, states, resume.quiet) if learned else (),
        inherited=passed_on or ENDED in resume.quiet or bool(resume.known),
        final=final,
        known=()
        if plan or len(streams) < 2
        else known(merge, states, last_key, writes_ahead=writes_ahead),
    )


def _fill(
    merge: Merge,
    states: Sequence[StreamState],
    stats: PageStats,
    wave: list[Request] | None,
    *,
    read_ahead: bool,
    budget: PageBudget | None,
    settle: bool,
) -> Waves[None]:
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
        yield from _wave(requests, merge, stats)
        wave, first = None, False


def _wave(requests: list[Request], merge: Merge, stats: PageStats) -> Waves[None]:
    """Read `requests` as one wave (concurrently, by the driver) and merge what they bring."""
    results = yield [_read(request, merge.descending) for request in requests]
    stats.add_wave([result.requests for result in results])
    for request, result in zip(requests, results, strict=True):
        result.record(stats)
        merge.absorb(request, result)


def _read(request: Request, descending: bool) -> Read:
    """The read a request asks for: its stream's remaining range, up to its bound."""
    state = request.state
    sort_range = state.remaining
    if request.bound is not None:
        sort_range = sort_range.up_to(request.bound, descending)
    return Read(state.index, state.stream, sort_range, descending, request.limit, state.start_key)


def _stream_states(
    streams: Sequence[PartitionStream], after: str | None, descending: bool, quiet: Sequence[int]
) -> list[StreamState]:
    """Each stream's range after the cursor; streams the cursor says ended are done."""
    states = []
    for index, stream in enumerate(streams):
        remaining = stream.sort_range.after(after, descending) if after else stream.sort_range
        state = StreamState(index, stream, remaining)
        state.done = remaining.is_empty() or (bool(quiet) and quiet[index] == ENDED)
        states.append(state)
    return states


def _plan_depth(streams: int, limit: int, after: str | None) -> int:
    """Pages to read ahead for the cursor's plan: none unless streams outnumber the page."""
    if streams <= limit:
        return 0
    key_bytes = len(after.encode()) if after else KEY_BYTES_GUESS
    fits = plannable_pages(limit, streams, key_bytes, PLAN_PAGES)
    return min(fits, math.ceil(PLAN_SPREAD * streams / limit))
