"""A range of a schedule rendered for the API: the engine's entries as PagerDuty's
``rendered_schedule_entries`` with their coverage, the range checked first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from incidents.errors import InvalidFilterError
from incidents.models import timestamp
from incidents.schedules.engine import render
from incidents.schedules.model import Entry, Layer, Override
from incidents.schedules.models import (
    MAX_RENDER,
    RenderedEntry,
    RenderedLayer,
    ScheduleLayerRequest,
    SchedulePreview,
    ScheduleRequest,
    SubSchedule,
)

DEFAULT_RANGE = timedelta(days=7)
"""What a read renders when no range is asked for: the coming week."""
EARLIEST, LATEST = datetime(1970, 1, 1, tzinfo=UTC), datetime(9000, 1, 1, tzinfo=UTC)
"""The instants a range may name: clocks read in any zone, a range's default added, never
leave the calendar Python holds."""


def bounded(name: str, instant: datetime | None) -> datetime | None:
    """`instant` if a range may name it (a 400 naming `name` if not)."""
    if instant is not None and not EARLIEST <= instant <= LATEST:
        raise InvalidFilterError(f"{name}: must be between 1970 and 9000")
    return instant


def asked_range(
    since: datetime | None,
    until: datetime | None,
    now: datetime,
    longest: timedelta = DEFAULT_RANGE,
) -> tuple[datetime, datetime]:
    """The range a read renders: [since, until) as asked, checked; without `since`, from now
    (or a default before `until`, if that is earlier), without `until`, a default on: a
    week, or `longest` if shorter."""
    default = min(DEFAULT_RANGE, longest)
    end = bounded("until", until)
    start = bounded("since", since) or (now if end is None else min(now, end - default))
    end = end or start + default
    checked_range(start, end)
    return start, end


MAX_RENDERED_ENTRIES = 25_000
"""Entries a render answers at most (every layer's and the final schedule's): an answer
stays a few megabytes, inside what a Lambda function may return."""


def longest_range(layers: Sequence[Layer]) -> timedelta:
    """The longest range whose render stays within `MAX_RENDERED_ENTRIES`: each layer's
    turns over it (at its shortest turn), and as many again for the final schedule."""
    turns_a_second = sum(
        1 / min(v.turn_length for v in layer.versions).total_seconds() for layer in layers
    )
    if not turns_a_second:
        return MAX_RENDER
    return min(MAX_RENDER, timedelta(seconds=MAX_RENDERED_ENTRIES / 2 / turns_a_second))


def checked_size(layers: Sequence[Layer], since: datetime, until: datetime) -> None:
    """A range whose render stays within `MAX_RENDERED_ENTRIES` (a 400 saying how long one
    may be)."""
    longest = longest_range(layers)
    if until - since > longest:
        raise InvalidFilterError(
            f"a render holds at most {MAX_RENDERED_ENTRIES:,} entries: at this schedule's "
            f"turns, ask for at most {longest.total_seconds() / 86_400:.2f} days"
        )


def checked_range(since: datetime, until: datetime) -> None:
    """A range a render may cover: forwards, and at most `MAX_RENDER` long."""
    if since >= until:
        raise InvalidFilterError("since must be before until")
    if until - since > MAX_RENDER:
        raise InvalidFilterError(f"a range covers at most {MAX_RENDER.days} days")


def coverage(entries: Sequence[Entry], since: datetime, until: datetime) -> float:
    """The percentage of [since, until) in which someone is on call."""
    covered = sum((e.end - e.start for e in entries if e.user_id is not None), timedelta())
    return round(100 * (covered / (until - since)), 2)


def sub_schedule(
    name: str, entries: Sequence[Entry], since: datetime, until: datetime
) -> SubSchedule:
    return SubSchedule(
        name=name,
        rendered_schedule_entries=[RenderedEntry.of(e) for e in entries],
        rendered_coverage_percentage=coverage(entries, since, until),
    )


@dataclass(frozen=True)
class RenderedRange:
    """A range of a schedule as the API shows it."""

    layers: list[RenderedLayer]
    final: SubSchedule
    overrides: SubSchedule


def render_range(
    shown: Sequence[ScheduleLayerRequest],
    layers: Sequence[Layer],
    overrides: Sequence[Override],
    since: datetime,
    until: datetime,
) -> RenderedRange:
    """`layers` (with all their versions) and `overrides` over [since, until), each layer
    shown as `shown` describes it."""
    checked_range(since, until)
    checked_size(layers, since, until)
    rendered = render(layers, overrides, since, until)
    return RenderedRange(
        layers=[
            RenderedLayer(
                **layer.model_dump(),
                rendered_schedule_entries=[RenderedEntry.of(e) for e in entries],
                rendered_coverage_percentage=coverage(entries, since, until),
            )
            for layer, entries in zip(shown, rendered.layers, strict=True)
        ],
        final=sub_schedule("Final Schedule", rendered.final, since, until),
        overrides=sub_schedule("Overrides", rendered.overrides, since, until),
    )


def preview(
    request: ScheduleRequest, overrides: Sequence[Override], since: datetime, until: datetime
) -> SchedulePreview:
    """`request` rendered over [since, until) as if it were saved."""
    shown = render_range(request.schedule_layers, request.layers(), overrides, since, until)
    return SchedulePreview(
        name=request.name,
        description=request.description,
        time_zone=request.time_zone,
        team_ids=request.team_ids,
        since=timestamp(since),
        until=timestamp(until),
        schedule_layers=shown.layers,
        final_schedule=shown.final,
        overrides_subschedule=shown.overrides,
    )
