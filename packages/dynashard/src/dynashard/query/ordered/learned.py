"""What an ``ordered`` page passes on to the next through its cursor (`ordered_state`): the
plan of the next pages, what each stream is known to hold, the key span and the quiet counts;
and how the next page starts from them."""

from __future__ import annotations

from collections.abc import Sequence

from dynashard.keys.key_span import KeySpan, page_span
from dynashard.query.ordered.merge import Merge, Request, StreamState
from dynashard.query.ordered.state import ENDED, MAX_KNOWN, PROBE, Window, separator

SPAN_ITEMS = 40
"""A span of fewer items says little about the density (10 items: about 30 % either way),
so the next span goes on from it instead of starting afresh."""


def planned_wave(merge: Merge, states: Sequence[StreamState], window: Window) -> list[Request]:
    """The first wave of a planned page: streams outside the window are known to hold
    nothing up to its end; those inside are read up to it."""
    end, members = window
    inside = set(members)
    for state in states:
        if state.index not in inside and not state.done:
            state.empty_up_to(end, merge.descending)
    return [Request(s, merge.limit + 1, end) for s in states if s.index in inside and not s.done]


def skip_known(merge: Merge, states: Sequence[StreamState], known: Sequence[Window]) -> None:
    """Start each stream where the cursor's `known` windows say it holds nothing up to:
    past the end of the last of the leading windows that do not name it."""
    named: set[int] = set()
    for end, members in known:
        named.update(members)
        for state in states:
            if state.index not in named and not state.done:
                state.empty_up_to(end, merge.descending)
                state.real = end


def known(
    merge: Merge, states: Sequence[StreamState], resume: str | None, *, writes_ahead: bool
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
    reach = _reaches(merge, states, resume, writes_ahead)
    ends = sorted({r for r in reach.values() if r is not None}, reverse=merge.descending)
    if len(ends) > MAX_KNOWN:
        ends = [ends[(i + 1) * len(ends) // MAX_KNOWN - 1] for i in range(MAX_KNOWN)]
    windows: list[Window] = []
    for end in ends:
        members = tuple(
            s.index
            for s in states
            if s.index not in reach
            or (reach[s.index] is not None and merge.before(reach[s.index] or "", end))
        )
        if windows and windows[-1][1] == members:
            windows.pop()  # the same streams named up to a further end: the nearer says less
        windows.append((end, members))
    return tuple(windows)


def _reaches(
    merge: Merge, states: Sequence[StreamState], resume: str, writes_ahead: bool
) -> dict[int, str | None]:
    """Per stream known to hold nothing past `resume` for a while: up to which key
    (None: to its end). See `known`."""
    first_buffered: dict[int, str] = {}
    for entry in sorted(merge.heap):
        if entry.key != resume:
            first_buffered.setdefault(entry.index, entry.key)
    reach: dict[int, str | None] = {}
    for state in states:
        buffered = first_buffered.get(state.index)
        if buffered is not None:
            position: str | None = buffered + "\x00" if merge.descending else None
        elif state.done:
            reach[state.index] = None
            continue
        else:
            position = state.real if writes_ahead else state.covered
        if position is not None and merge.before(resume, position):
            reach[state.index] = position
    return reach


def plan(merge: Merge, states: Sequence[StreamState]) -> tuple[Window, ...]:
    """Whole pages the buffer already holds beyond this one, up to the horizon (the
    least-read unfinished stream's position, up to which every item is known)."""
    all_read, horizon = merge.horizon(states)
    if not merge.full or not all_read:
        return ()
    windows: list[Window] = []
    identities: set[str] = set()
    members: set[int] = set()
    end = ""
    for entry in sorted(merge.heap):
        if entry.key == merge.last_key:
            continue  # copies of the page's last item
        if horizon is not None and merge.before(horizon, entry.key):
            break
        if len(identities) == merge.limit and entry.key != end:
            cut = separator(end, entry.key, inclusive=False, descending=merge.descending)
            windows.append((cut, tuple(sorted(members))))
            identities, members = set(), set()
        identity = merge.identity(entry.item) if merge.identity else entry.key
        if identity not in identities:  # the copy that wins; the others need no read
            identities.add(identity)
            members.add(entry.index)
        end = entry.key
    if len(identities) == merge.limit:
        cut = separator(end, horizon, inclusive=True, descending=merge.descending)
        windows.append((cut, tuple(sorted(members))))
    return tuple(windows)


def span_after(merge: Merge, previous: KeySpan | None, after: str | None) -> KeySpan | None:
    """This page's key span for the next page, going on from `previous` while that
    holds too few items to go by alone."""
    if merge.last_key is None or merge.first_key is None:
        return None
    start, counted = after or merge.first_key, len(merge.items) - (0 if after else 1)
    if previous is not None and previous.items < SPAN_ITEMS:
        start, counted = previous.start, counted + previous.items
    return page_span(start, merge.last_key, counted)


def quiet(merge: Merge, states: Sequence[StreamState], previous: Sequence[int]) -> tuple[int, ...]:
    """Per stream, for the next page: `ENDED` when it has nothing after this page, 0 when
    it supplied an item, else one more quiet page than before (up to `PROBE`)."""
    pending = {e.index for e in merge.heap if e.key != merge.last_key}
    counts = []
    for state in states:
        if state.done and state.index not in pending:
            counts.append(ENDED)
        elif state.index in merge.contributors or state.index in merge.probed:
            counts.append(0)  # supplied an item, or was read to its next one
        else:
            counts.append(min(PROBE, (previous[state.index] if previous else 0) + 1))
    return tuple(counts)


def holds_the_rest(merge: Merge, states: Sequence[StreamState], plan: Sequence[Window]) -> bool:
    """Whether `plan` holds every item left: every stream was read to its end, and the
    items buffered beyond this page fill the windows exactly."""
    if not all(s.done for s in states):
        return False
    rest = {
        merge.identity(e.item) if merge.identity else e.key
        for e in merge.heap
        if e.key != merge.last_key
    }
    return len(rest) == len(plan) * merge.limit


def ends_window(merge: Merge, end: str) -> bool:
    """Whether the page returned a planned window whole: full, not past its end, and
    nothing buffered left in it (a write since the plan can shift a window)."""
    if not merge.full or merge.last_key is None or merge.before(end, merge.last_key):
        return False
    return all(e.key == merge.last_key or merge.before(end, e.key) for e in merge.heap)
