"""Who is on call: at an instant (`on_call_at`), and over a range (`render`), computed apart
so each checks the other (tests/unit/test_schedule_engine.py).

Precedence, as PagerDuty's final schedule has it: an override that covers the instant (the
latest created wins), else the highest layer with someone on call (later layers are higher),
else nobody, a gap. A layer has someone on call inside its span, its version's turn and one of
that version's restriction windows.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from incidents.schedules.model import Entry, Layer, LayerVersion, Override
from incidents.schedules.restrictions import covers, windows
from incidents.schedules.rotation import turn_at, turns, user_of
from incidents.time_zones import zone


def version_at(layer: Layer, instant: datetime) -> LayerVersion:
    """The version in force at `instant`: the latest that took effect by then (the first
    rules before any later one)."""
    current = layer.versions[0]
    for version in layer.versions[1:]:
        if version.effective_from <= instant:
            current = version
    return current


def layer_user_at(layer: Layer, instant: datetime) -> str | None:
    """Who `layer` has on call at `instant`, if anyone."""
    if instant < layer.start or (layer.end is not None and instant >= layer.end):
        return None
    version = version_at(layer, instant)
    if not covers(version.restrictions, zone(version.time_zone), instant):
        return None
    return user_of(version, turn_at(version, instant))


def override_at(overrides: Sequence[Override], instant: datetime) -> Override | None:
    """The override in force at `instant`: of those covering it, the latest created."""
    covering = [o for o in overrides if o.start <= instant < o.end]
    return max(covering, key=lambda o: o.precedence, default=None)


def on_call_at(
    layers: Sequence[Layer], overrides: Sequence[Override], instant: datetime
) -> str | None:
    """Who the final schedule has on call at `instant` (None: a gap)."""
    override = override_at(overrides, instant)
    if override is not None:
        return override.user_id
    for layer in reversed(layers):
        user = layer_user_at(layer, instant)
        if user is not None:
            return user
    return None


@dataclass(frozen=True)
class Rendered:
    """A range of a schedule: the final schedule (gaps as entries with no user), each
    layer's entries and the overrides' (clipped to the range)."""

    final: list[Entry]
    layers: list[list[Entry]]
    overrides: list[Entry]


def render_layer(layer: Layer, since: datetime, until: datetime) -> list[Entry]:
    """`layer`'s shifts in [since, until): each version's turns over its own span, clipped
    to its restriction windows, a user's consecutive shifts joined."""
    entries: list[Entry] = []
    start = max(since, layer.start)
    end = until if layer.end is None else min(until, layer.end)
    effective = [
        version_at(layer, start),
        *(v for v in layer.versions if start < v.effective_from < end),
    ]
    for index, version in enumerate(effective):
        span_start = start if index == 0 else version.effective_from
        span_end = effective[index + 1].effective_from if index + 1 < len(effective) else end
        if span_start >= span_end:
            continue
        tz = zone(version.time_zone)
        for turn, turn_start, turn_end in turns(version, span_start, span_end):
            user = user_of(version, turn)
            for open_, close in windows(version.restrictions, tz, turn_start, turn_end):
                entries.append(Entry(open_, close, user))
    return joined(entries)


def joined(entries: Sequence[Entry]) -> list[Entry]:
    """`entries` (in order) with each run of one user's touching entries made one."""
    out: list[Entry] = []
    for entry in entries:
        if out and out[-1].user_id == entry.user_id and out[-1].end == entry.start:
            out[-1] = Entry(out[-1].start, entry.end, entry.user_id)
        else:
            out.append(entry)
    return out


def render(
    layers: Sequence[Layer], overrides: Sequence[Override], since: datetime, until: datetime
) -> Rendered:
    """[since, until) of a schedule: each layer rendered, then the final schedule composed
    from those entries and the overrides, piece by piece between their edges, in one pass
    over the edges (each layer's entries and the overrides are walked in order)."""
    rendered = [render_layer(layer, since, until) for layer in layers]
    clipped = sorted(
        (o for o in overrides if o.start < until and o.end > since), key=lambda o: o.start
    )
    edges = sorted(
        {since, until}
        | {t for entries in rendered for e in entries for t in (e.start, e.end)}
        | {t for o in clipped for t in (o.start, o.end) if since < t < until}
    )
    walks = [_Walk(entries) for entries in rendered]
    active = _ActiveOverrides(clipped)
    final = []
    for start, end in pairwise(edges):
        override = active.at(start)
        user = override.user_id if override is not None else _top_user(walks, start)
        final.append(Entry(start, end, user))
    shown = [Entry(max(o.start, since), min(o.end, until), o.user_id) for o in clipped]
    return Rendered(joined(final), rendered, shown)


def _top_user(walks: Sequence[_Walk], instant: datetime) -> str | None:
    """The highest layer's user at `instant`, if any layer has one."""
    for walk in reversed(walks):
        user = walk.at(instant)
        if user is not None:
            return user
    return None


class _Walk:
    """One layer's entries (in order, apart), asked at instants that never go back."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries, self.index = entries, 0

    def at(self, instant: datetime) -> str | None:
        while self.index < len(self.entries) and self.entries[self.index].end <= instant:
            self.index += 1
        if self.index < len(self.entries) and self.entries[self.index].start <= instant:
            return self.entries[self.index].user_id
        return None


class _ActiveOverrides:
    """Overrides (by start) asked at instants that never go back: those begun are held in
    a heap by precedence, the ended ones dropped as they reach its top."""

    def __init__(self, overrides: Sequence[Override]) -> None:
        self.pending, self.index = overrides, 0
        self.heap: list[_Latest] = []

    def at(self, instant: datetime) -> Override | None:
        while self.index < len(self.pending) and self.pending[self.index].start <= instant:
            override = self.pending[self.index]
            heapq.heappush(self.heap, _Latest(override))
            self.index += 1
        while self.heap and self.heap[0].override.end <= instant:
            heapq.heappop(self.heap)
        return self.heap[0].override if self.heap else None


@dataclass(frozen=True)
class _Latest:
    """An override in a heap whose top is the latest created."""

    override: Override

    def __lt__(self, other: _Latest) -> bool:
        return self.override.precedence > other.override.precedence
