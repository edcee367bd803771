"""Pictures and tables of on-call schedules, drawn by the docs build from the schedule engine
itself (`incidents.schedules.engine`), so what the page shows is what the engine answers.

A page writes ``{{ schedule: layers }}`` where a picture goes (an SVG at
``schedules/<name>.svg`` of the built site) and ``{{ schedule: spring_forward }}`` where a
table of handoffs goes (see `tools.docs_hooks`).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

import matplotlib

matplotlib.use("Agg")  # no display at build time

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from incidents.schedules.engine import Rendered, on_call_at, render
from incidents.schedules.model import (
    Entry,
    Layer,
    LayerVersion,
    Override,
    Restriction,
    RestrictionType,
)
from incidents.time_zones import instant_of, zone
from tools.bench_charts import STYLE

FOLDER = "schedules"
COLOURS = {"Ada": "#4477aa", "Bob": "#ee6677", "Cyd": "#228833", "Dee": "#ccbb44"}
ZONE = "Europe/London"
MONDAY = instant_of(datetime(2027, 3, 22), zone(ZONE))


@dataclass(frozen=True)
class Example:
    """A schedule to draw: its layers (lowest first) and overrides, over a week."""

    title: str
    layers: tuple[tuple[str, Layer], ...]
    overrides: tuple[Override, ...]
    since: datetime
    until: datetime


def _rotation(
    users: tuple[str, ...], turn: timedelta, restrictions: tuple[Restriction, ...] = ()
) -> Layer:
    version = LayerVersion(MONDAY, ZONE, users, MONDAY, turn, restrictions)
    return Layer(MONDAY, None, (version,))


WORKING_HOURS = tuple(
    Restriction(RestrictionType.WEEKLY, time(9), timedelta(hours=8), day) for day in range(1, 6)
)
EXAMPLES = {
    "layers": Example(
        title=(
            "A week of a schedule: a weekly rotation of Ada, Bob and Cyd at night and at "
            "weekends under a daily rotation of Dee and Ada restricted to working hours, one "
            "override by Bob, and the final schedule they make"
        ),
        layers=(
            (
                "Layer 1: Ada, Bob, Cyd, 1-day turns",
                _rotation(("Ada", "Bob", "Cyd"), timedelta(days=1)),
            ),
            ("Layer 2", _rotation(("Dee", "Ada"), timedelta(days=1), WORKING_HOURS)),
        ),
        overrides=(
            Override(
                "override",
                MONDAY + timedelta(days=2, hours=12),
                MONDAY + timedelta(days=3, hours=6),
                "Bob",
                MONDAY,
            ),
        ),
        since=MONDAY,
        until=MONDAY + timedelta(days=7),
    ),
}


def svg(example: Example) -> bytes:
    """`example` as rows of bars: each layer (lowest at the bottom), the overrides, and the
    final schedule on top, one colour per user, gaps left blank."""
    rendered = render(
        [layer for _, layer in example.layers], example.overrides, example.since, example.until
    )
    rows = _rows(example, rendered)
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.2, 0.7 * len(rows) + 1.2), layout="constrained")
        axes = figure.add_subplot()
        for index, (_, entries) in enumerate(rows):
            _bars(axes, index, entries, example.since)
        axes.set_yticks(range(len(rows)), [label for label, _ in rows])
        days = (example.until - example.since).days
        tz = zone(ZONE)
        axes.set_xticks(
            range(days + 1),
            [
                (example.since + timedelta(days=d)).astimezone(tz).strftime("%a")
                for d in range(days + 1)
            ],
        )
        axes.set_xlim(0, days)
        axes.set_xlabel(f"days ({ZONE})")
        axes.grid(axis="y", visible=False)
        handles = [axes.barh(0, 0, color=colour, label=name) for name, colour in COLOURS.items()]
        figure.legend(
            handles=handles, loc="outside lower center", ncols=len(COLOURS), frameon=False
        )
        out = io.BytesIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def _rows(example: Example, rendered: Rendered) -> list[tuple[str, list[Entry]]]:
    layers = [
        (label, entries)
        for (label, _), entries in zip(example.layers, rendered.layers, strict=True)
    ]
    return [*layers, ("Overrides", rendered.overrides), ("Final schedule", rendered.final)]


def _bars(axes: Axes, row: int, entries: list[Entry], since: datetime) -> None:
    for entry in entries:
        if entry.user_id is None:
            continue
        start = (entry.start - since) / timedelta(days=1)
        width = (entry.end - entry.start) / timedelta(days=1)
        axes.barh(row, width, left=start, height=0.6, color=COLOURS[entry.user_id])


def spring_forward() -> str:
    """A markdown table: a daily 02:30 handoff in America/Chicago across 2027's spring-forward
    change, each handoff found by asking the engine every 30 seconds."""
    chicago = zone("America/Chicago")
    start = instant_of(datetime(2027, 3, 12, 2, 30), chicago)
    layer = Layer(
        start, None, (LayerVersion(start, chicago.key, ("Ada", "Bob"), start, timedelta(days=1)),)
    )
    rows = ["| handoff (local) | in UTC | shift before it |", "|---|---|---|"]
    previous_user, previous_at, instant = on_call_at([layer], [], start), start, start
    while instant < start + timedelta(days=3):
        instant += timedelta(seconds=30)
        user = on_call_at([layer], [], instant)
        if user != previous_user:
            hours = (instant - previous_at) / timedelta(hours=1)
            local = instant.astimezone(chicago).strftime("%a %d %b %H:%M %Z")
            rows.append(f"| {local}: {user} | {instant.astimezone(UTC):%H:%M}Z | {hours:g} h |")
            previous_user, previous_at = user, instant
    return "\n".join(rows)


TABLES: dict[str, Callable[[], str]] = {"spring_forward": spring_forward}
