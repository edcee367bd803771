"""Who is on call, as PagerDuty's ``/oncalls`` answers it: now, for a whole account, from
the materialized shifts (one Query of the account's teams partition, no schedule rendered);
over a range, by rendering the schedules the filters select."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from incidents.errors import InvalidFilterError
from incidents.keys import (
    oncall_members_prefix,
    oncall_sort_key,
    oncalls_prefix,
    teams_partition,
)
from incidents.models import timestamp
from incidents.schedules.engine import render
from incidents.schedules.models import (
    MAX_RENDER,
    OnCall,
    OnCallList,
    ScheduleReference,
    UserReference,
)
from incidents.schedules.on_call_now import Known, Shift, known_at, known_from, members_from
from incidents.schedules.reads import find_schedule, overrides_between, overrides_reader
from incidents.schedules.rendering import bounded, checked_size
from incidents.schedules.stored import StoredSchedule
from incidents.store import Caller, Store

MAX_RANGE_SCHEDULES = 25
"""Schedules a range (not "now") renders at most in one request: rendering is work per
schedule, so a range over more is asked for with narrower filters."""


@dataclass(frozen=True)
class OnCallFilter:
    """What a ``/oncalls`` request selects (empty: everything)."""

    schedule_ids: frozenset[str] = field(default_factory=frozenset)
    user_ids: frozenset[str] = field(default_factory=frozenset)
    team_ids: frozenset[str] = field(default_factory=frozenset)
    earliest: bool = False
    """Each user's earliest-ending entry only."""

    def schedule(self, known: Known) -> bool:
        """Whether a schedule is selected (by id and teams)."""
        if self.schedule_ids and known.schedule_id not in self.schedule_ids:
            return False
        return not self.team_ids or bool(self.team_ids & set(known.team_ids))

    def user(self, user_id: str | None) -> bool:
        """Whether an entry of `user_id` is selected (a gap never is)."""
        return user_id is not None and (not self.user_ids or user_id in self.user_ids)


def on_call(
    store: Store,
    caller: Caller,
    selected: OnCallFilter,
    since: datetime | None = None,
    until: datetime | None = None,
) -> OnCallList:
    """Who is on call now (no range), at an instant (since alone, or until before now
    alone), or over [since, until)."""
    until = bounded("until", until)
    since = bounded("since", since) or min(store.clock(), until or store.clock())
    until = until or since
    if until < since or until - since > MAX_RENDER:
        raise InvalidFilterError(
            f"since must not be after until, at most {MAX_RENDER.days} days apart"
        )
    knowns = selected_schedules(store, caller.account_id, selected)
    if since == until:
        entries = [_at(store, caller.account_id, known, since) for known in knowns]
        found = [(known, shift) for known, shift in zip(knowns, entries, strict=True)]
    else:
        found = _over_range(store, caller.account_id, knowns, since, until)
    shown = [(k, s) for k, s in found if selected.user(s.user_id)]
    if selected.earliest:
        shown = _earliest(shown)
    return OnCallList(oncalls=[_entry(known, shift) for known, shift in shown])


def selected_schedules(store: Store, account: str, selected: OnCallFilter) -> list[Known]:
    """The current and next shift of each schedule `selected` names: one Query, and one
    more of the schedules' members when it names users (only schedules they may be on)."""
    knowns = [k for k in materialized(store, account) if selected.schedule(k)]
    if not selected.user_ids:
        return knowns
    items = store.query_partition(teams_partition(account), prefix=oncall_members_prefix())
    members = dict(map(members_from, items))
    return [  # a schedule saved before members were kept: anyone may be on it
        known
        for known in knowns
        if known.schedule_id not in members or members[known.schedule_id] & selected.user_ids
    ]


def materialized(store: Store, account: str) -> list[Known]:
    """Every schedule's current and next shift: one Query (paged by DynamoDB's 1 MB)."""
    items = store.query_partition(teams_partition(account), prefix=oncalls_prefix())
    return [known_from(item) for item in items]


def schedule_on_call(
    store: Store, account: str, schedule_id: str, instant: datetime
) -> tuple[Shift, int] | None:
    """Who one schedule has on call at `instant` (a gap: nobody) and the schedule's version
    that says so: one point read of its materialized shifts; None for a schedule that is
    not there."""
    item = store.get(teams_partition(account), oncall_sort_key(schedule_id))
    if item is None:
        return None
    known = known_from(item)
    return _at(store, account, known, instant), known.version


def _at(store: Store, account: str, known: Known, instant: datetime) -> Shift:
    """The shift `known` has at `instant`; rendered if past what it holds (a sweep more
    than a shift late), so the answer is exact either way."""
    shift = known.answers(instant)
    if shift is not None:
        return shift
    schedule = find_schedule(store, account, known.schedule_id)
    if schedule is None:  # deleted since the Query: nobody
        return Shift(None, instant, instant)
    overrides = overrides_reader(store, account, schedule.id)
    return known_at(schedule, overrides, instant).current


def _over_range(
    store: Store, account: str, knowns: Sequence[Known], since: datetime, until: datetime
) -> list[tuple[Known, Shift]]:
    if len(knowns) > MAX_RANGE_SCHEDULES:
        raise InvalidFilterError(
            f"a range renders at most {MAX_RANGE_SCHEDULES} schedules: {len(knowns)} match; "
            "narrow it with schedule_ids[] or team_ids[] (or ask for now, without a range)"
        )
    found: list[tuple[Known, Shift]] = []
    for known in knowns:
        schedule = find_schedule(store, account, known.schedule_id)
        if schedule is not None:
            found += [(known, s) for s in rendered_shifts(store, account, schedule, since, until)]
    return found


def rendered_shifts(
    store: Store, account: str, schedule: StoredSchedule, since: datetime, until: datetime
) -> list[Shift]:
    """The final schedule's shifts over [since, until)."""
    checked_size(schedule.layers(), since, until)
    overrides = overrides_between(store, account, schedule.id, since, until)
    final = render(schedule.layers(), overrides, since, until).final
    return [Shift(e.user_id, e.start, e.end) for e in final]


def _earliest(found: Iterable[tuple[Known, Shift]]) -> list[tuple[Known, Shift]]:
    """Each user's entry that ends first."""
    first: dict[str | None, tuple[Known, Shift]] = {}
    for known, shift in found:
        held = first.get(shift.user_id)
        if held is None or shift.end < held[1].end:
            first[shift.user_id] = (known, shift)
    return list(first.values())


def _entry(known: Known, shift: Shift) -> OnCall:
    assert shift.user_id is not None  # gaps are filtered out first
    return OnCall(
        user=UserReference(id=shift.user_id),
        schedule=ScheduleReference(id=known.schedule_id, summary=known.name),
        start=timestamp(shift.start),
        end=timestamp(shift.end),
    )
