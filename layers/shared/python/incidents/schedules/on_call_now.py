"""Who is on call now, materialized: each schedule's current and next shift of its final
schedule, in one item per schedule in the account's teams partition, so "who is on call
now" for a whole account is one Query of that partition, with no computation per schedule.

The item is written in the transaction of every change that can move it (a schedule
created or edited, an override created or deleted) and by the schedule's handoff timer,
due when the current shift ends. A read at an instant inside the next shift (a handoff the
sweep has not yet fired) answers the next shift: the answer is exact whenever the sweep is
at most one shift late, and the item says when it no longer knows (`Known.answers`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dynashard.query import Item
from incidents.items import deserialize
from incidents.keys import oncall_members_sort_key, oncall_sort_key
from incidents.models import parse_timestamp, timestamp
from incidents.schedules.engine import render
from incidents.schedules.model import Entry, Layer, Override
from incidents.schedules.models import MAX_RENDER
from incidents.schedules.rendering import longest_range
from incidents.schedules.stored import StoredSchedule, keyed

HORIZONS = (timedelta(days=1), timedelta(days=7), MAX_RENDER)
"""How far ahead (and back) a materialization renders, tried in turn until it sees the
next shift's end: most rotations hand off within a day, and none is rendered past
`MAX_RENDER`, nor past what a render of its turns may hold (`longest_range`)."""

OverridesIn = Callable[[datetime, datetime], Sequence[Override]]
"""The schedule's overrides that meet [since, until)."""


@dataclass(frozen=True)
class Shift:
    """Someone (or nobody: a gap) on call from `start` to `end` in the final schedule."""

    user_id: str | None
    start: datetime
    end: datetime

    def holds(self, instant: datetime) -> bool:
        """Whether `instant` falls in the shift."""
        return self.start <= instant < self.end


@dataclass(frozen=True)
class Known:
    """A schedule's materialized current and next shift (`next` is None when nothing
    changes within the horizon: `current` is cut at the horizon, where it is worked out
    again), as of the schedule's `version`."""

    schedule_id: str
    name: str
    team_ids: tuple[str, ...]
    version: int
    current: Shift
    next: Shift | None

    def answers(self, instant: datetime) -> Shift | None:
        """The shift in force at `instant`, if the item knows it (None: `instant` is past
        what was materialized; the engine must answer)."""
        for shift in (self.current, self.next):
            if shift is not None and shift.holds(instant):
                return shift
        return None

    @property
    def handoff_at(self) -> datetime:
        """When the current shift ends: the handoff timer's due time."""
        return self.current.end


def shifts_from(layers: Sequence[Layer], overrides: OverridesIn, at: datetime) -> list[Shift]:
    """The final schedule's shifts from the one holding `at` on: each exact over its span,
    the first from when it began (or a horizon back) and the last cut at the horizon ahead;
    three or more when the next shift's end is within the horizon."""
    furthest = longest_range(layers) / 2  # a render of turns that short stays bounded
    horizons = [h for h in HORIZONS if h < furthest] + [min(furthest, HORIZONS[-1])]
    for horizon in horizons:
        since, until = at - horizon, at + horizon
        final = render(layers, overrides(since, until), since, until).final
        shifts = [_shift(entry) for entry in final if entry.end > at]
        if (len(shifts) > 2 and shifts[0].start > since) or horizon == horizons[-1]:
            return shifts
    raise AssertionError("unreachable: the last horizon returns")


def _shift(entry: Entry) -> Shift:
    return Shift(entry.user_id, entry.start, entry.end)


def known_at(schedule: StoredSchedule, overrides: OverridesIn, at: datetime) -> Known:
    """`schedule`'s current and next shift at `at`."""
    shifts = shifts_from(schedule.layers(), overrides, at)
    current = shifts[0]
    following = shifts[1] if len(shifts) > 1 else None
    return Known(
        schedule_id=schedule.id,
        name=schedule.name,
        team_ids=schedule.team_ids,
        version=schedule.version,
        current=current,
        next=following,
    )


def known_item(account: str, known: Known) -> Item:
    """`known` as its item in the account's teams partition."""
    return keyed(
        account,
        oncall_sort_key(known.schedule_id),
        {
            "Type": "oncall",
            "schedule_id": known.schedule_id,
            "name": known.name,
            "team_ids": list(known.team_ids),
            "version": known.version,
            "current": _shift_values(known.current),
            "next": None if known.next is None else _shift_values(known.next),
        },
    )


def members_item(account: str, schedule: StoredSchedule) -> Item:
    """Everyone who may have a shift on `schedule` (its layers' users and its overrides'),
    beside its materialized shifts but not in their Query: a read for some users renders
    only the schedules they may be on, and "now" reads no more than the shifts."""
    values = {
        "Type": "oncall_members",
        "schedule_id": schedule.id,
        "user_ids": list(schedule.user_ids()),
    }
    return keyed(account, oncall_members_sort_key(schedule.id), values)


def members_from(item: Item) -> tuple[str, frozenset[str]]:
    """A members item's schedule and users."""
    values = deserialize(item)
    return values["schedule_id"], frozenset(values.get("user_ids", []))


def _shift_values(shift: Shift) -> dict[str, Any]:
    return {"user_id": shift.user_id, "start": timestamp(shift.start), "end": timestamp(shift.end)}


def known_from(item: Item) -> Known:
    """The materialized shifts an item holds."""
    values = deserialize(item)
    following = values.get("next")
    return Known(
        schedule_id=values["schedule_id"],
        name=values["name"],
        team_ids=tuple(values.get("team_ids", [])),
        version=int(values["version"]),
        current=_shift_from(values["current"]),
        next=None if following is None else _shift_from(following),
    )


def _shift_from(values: dict[str, Any]) -> Shift:
    return Shift(
        values.get("user_id"), parse_timestamp(values["start"]), parse_timestamp(values["end"])
    )
