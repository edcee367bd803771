"""Schedules stored on DynamoDB Local, on a simulated clock: created with the account's
users and teams only, rendered as the engine answers, edited from a time on without
changing who was on call before it, overridden (the newest override wins, a past one is
read-only), listed, and deleted with every item they had."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dynashard import GrowthPolicy
from incidents.errors import NotFoundError
from incidents.keys import sweep_marker_key
from incidents.models import EventType, ScheduleHandoff
from incidents.paging import PageRequest
from incidents.requests import CreateTeam, SaveProfile
from incidents.schedules import commands
from incidents.schedules.commands import (
    MAX_PENDING_VERSIONS,
    PastOverrideError,
    ScheduleTimesError,
    TooManyPendingVersionsError,
)
from incidents.schedules.engine import on_call_at
from incidents.schedules.handoffs import hand_off
from incidents.schedules.models import OverrideRequest, Schedule, ScheduleChange, ScheduleRequest
from incidents.schedules.oncalls import OnCallFilter, on_call
from incidents.schedules.reads import overrides_between, read_known, read_schedule
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import item_key
from incidents.team_commands import create_team
from incidents.timeline.queries import EventRequest, account_events
from incidents.timers.schedule import Timer, TimerKind, minute_of
from incidents.timers.sweep import SweepReport
from incidents.users import save_profile
from tests.helpers.clock import ClockedAccount

pytestmark = pytest.mark.integration
T0 = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)  # a Monday; London is on GMT
DAY = timedelta(days=1)


@pytest.fixture(scope="module")
def shared_store(dynamodb: Any, module_table: str) -> Iterator[Store]:
    built = build_store(dynamodb, module_table, b"schedules-test-secret-" * 2,
                        participant_policy=GrowthPolicy(default_count=4))  # fmt: skip
    yield built
    built.engine.close()


@pytest.fixture
def account(shared_store: Store) -> ClockedAccount:
    clocked = ClockedAccount(store=shared_store, now=T0)
    save_profile(shared_store, clocked.owner, SaveProfile(name="Ada"))
    return clocked


def colleague(account: ClockedAccount, name: str) -> str:
    user = Caller(account.owner.account_id, new_id("user"))
    save_profile(account.store, user, SaveProfile(name=name))
    return user.user_id


def body(users: list[str], **changes: Any) -> dict[str, Any]:
    layer = {
        "name": "Primary",
        "start": "2027-03-01T00:00:00Z",
        "users": [{"user_id": user} for user in users],
        "rotation_virtual_start": "2027-03-01T09:00:00Z",
        "rotation_turn_length_seconds": 86400,
    }
    return {"name": "Ops", "time_zone": "Europe/London", "schedule_layers": [layer], **changes}


def final(schedule: Schedule) -> list[tuple[str, str, str | None]]:
    return [
        (e.start[5:16], e.end[5:16], e.user.id if e.user else None)
        for e in schedule.final_schedule.rendered_schedule_entries
    ]


def test_a_schedule_is_stored_and_rendered_as_the_engine_answers(account: ClockedAccount) -> None:
    store, owner = account.store, account.owner
    bob = colleague(account, "Bob")
    team = create_team(store, owner, CreateTeam(name="SRE"))
    created = commands.create_schedule(
        store, owner, ScheduleRequest.model_validate(body([owner.user_id, bob], team_ids=[team.id]))
    )
    assert created.version == 1
    assert created.team_ids == [team.id]
    assert (
        final(created)
        == [
            ("03-01T08:00", "03-01T09:00", bob),  # turn -1 until the virtual start
            ("03-01T09:00", "03-02T09:00", owner.user_id),
            ("03-02T09:00", "03-03T09:00", bob),
            *final(created)[3:],
        ]
    )
    read = commands.get_schedule(store, owner, created.id, T0 + 5 * DAY, T0 + 6 * DAY)
    stored = ScheduleRequest.model_validate(body([owner.user_id, bob])).layers()
    for entry in read.final_schedule.rendered_schedule_entries:
        at = datetime.fromisoformat(entry.start)
        assert entry.user is not None
        assert entry.user.id == on_call_at(stored, [], at)
    listed = commands.list_schedules(store, owner)
    assert [s.id for s in listed.items] == [created.id]


@pytest.mark.parametrize("missing", ["user", "team"])
def test_a_user_or_team_of_another_account_is_not_found(
    account: ClockedAccount, missing: str
) -> None:
    stranger = new_id(missing)
    users = [account.owner.user_id, stranger] if missing == "user" else [account.owner.user_id]
    teams = [stranger] if missing == "team" else []
    request = ScheduleRequest.model_validate(body(users, team_ids=teams))
    with pytest.raises(NotFoundError, match=f"{missing} {stranger} not found"):
        commands.create_schedule(account.store, account.owner, request)
    assert commands.list_schedules(account.store, account.owner).items == []


def test_an_edit_from_a_time_on_leaves_every_answer_before_it(account: ClockedAccount) -> None:
    store, owner = account.store, account.owner
    bob, cyd = colleague(account, "Bob"), colleague(account, "Cyd")
    created = commands.create_schedule(
        store, owner, ScheduleRequest.model_validate(body([owner.user_id, bob]))
    )
    at = T0 + 3 * DAY + timedelta(hours=5)  # in the middle of a shift
    before = final(commands.get_schedule(store, owner, created.id, T0, at))
    change = ScheduleChange.model_validate({**body([cyd]), "effective_at": at.isoformat()})
    edited = commands.update_schedule(store, owner, created.id, change)
    assert edited.version == 2
    assert final(commands.get_schedule(store, owner, created.id, T0, at)) == before
    after = final(commands.get_schedule(store, owner, created.id, at, at + 5 * DAY))
    assert after == [(at.isoformat()[5:16], (at + 5 * DAY).isoformat()[5:16], cyd)]
    account.at(T0 + 5 * DAY)
    with pytest.raises(ScheduleTimesError, match="effective_at: must not be in the past"):
        commands.update_schedule(
            store, owner, created.id,
            ScheduleChange.model_validate({**body([bob]), "effective_at": at.isoformat()}),
        )  # fmt: skip


def test_edits_waiting_to_take_effect_are_bounded_and_one_earlier_replaces_them(
    account: ClockedAccount,
) -> None:
    """Each edit from a later time kept the ones before it, and an edit from now then
    deleted them all in one transaction: past 100 items DynamoDB refused it (a 500). A
    layer holds at most `MAX_PENDING_VERSIONS` of them (409 beyond)."""
    store, owner = account.store, account.owner
    bob, cyd = colleague(account, "Bob"), colleague(account, "Cyd")
    created = commands.create_schedule(
        store, owner, ScheduleRequest.model_validate(body([owner.user_id, bob]))
    )

    def edit(users: list[str], days: int) -> Schedule:
        at = (T0 + days * DAY).isoformat()
        change = ScheduleChange.model_validate({**body(users), "effective_at": at})
        return commands.update_schedule(store, owner, created.id, change)

    for day in range(1, MAX_PENDING_VERSIONS + 1):
        edit([cyd, bob] if day % 2 else [bob, cyd], day)
    with pytest.raises(TooManyPendingVersionsError, match="at most 5 edits of a layer"):
        edit([cyd], MAX_PENDING_VERSIONS + 1)
    assert edit([cyd], 0).version == MAX_PENDING_VERSIONS + 2  # from now: replaces them all
    later = final(commands.get_schedule(store, owner, created.id, T0, T0 + 3 * DAY))
    assert {user for _, _, user in later} == {cyd}


def test_overrides_win_and_a_past_one_is_read_only(account: ClockedAccount) -> None:
    store, owner = account.store, account.owner
    bob, cyd = colleague(account, "Bob"), colleague(account, "Cyd")
    created = commands.create_schedule(
        store, owner, ScheduleRequest.model_validate(body([owner.user_id, bob]))
    )
    first = commands.create_override(
        store, owner, created.id, OverrideRequest(start=T0 + DAY, end=T0 + 2 * DAY, user_id=cyd)
    )
    six, eight = T0 + DAY + timedelta(hours=6), T0 + DAY + timedelta(hours=8)
    newer = commands.create_override(
        store, owner, created.id, OverrideRequest(start=six, end=eight, user_id=bob)
    )
    shown = commands.get_schedule(store, owner, created.id, T0 + DAY, T0 + 2 * DAY)
    assert final(shown) == [
        ("03-02T08:00", "03-02T14:00", cyd),
        ("03-02T14:00", "03-02T16:00", bob),
        ("03-02T16:00", "03-03T08:00", cyd),
    ]
    assert shown.version == 3
    listed = commands.list_overrides(store, owner, created.id, T0, T0 + 3 * DAY)
    assert [o.id for o in listed.overrides] == [newer.id, first.id]  # by end
    account.at(T0 + DAY + timedelta(hours=7))  # the newer one is under way: it ends now
    commands.delete_override(store, owner, created.id, newer.id)
    (ended,) = [
        o
        for o in commands.list_overrides(store, owner, created.id, T0, T0 + 3 * DAY).overrides
        if o.id == newer.id
    ]
    assert ended.end.startswith("2027-03-02T15:00")
    account.at(T0 + 3 * DAY)
    with pytest.raises(PastOverrideError, match=f"override {first.id} ended at"):
        commands.delete_override(store, owner, created.id, first.id)
    with pytest.raises(ScheduleTimesError, match="end: must be in the future"):
        commands.create_override(
            store, owner, created.id, OverrideRequest(start=T0, end=T0 + DAY, user_id=bob)
        )
    with pytest.raises(NotFoundError, match="not found in this account"):
        commands.create_override(
            store, owner, created.id,
            OverrideRequest(start=T0 + 4 * DAY, end=T0 + 5 * DAY, user_id=new_id("user")),
        )  # fmt: skip


def test_a_deleted_schedule_leaves_nothing(account: ClockedAccount) -> None:
    store, owner = account.store, account.owner
    created = commands.create_schedule(
        store, owner, ScheduleRequest.model_validate(body([owner.user_id]))
    )
    commands.create_override(
        store, owner, created.id,
        OverrideRequest(start=T0 + DAY, end=T0 + 2 * DAY, user_id=owner.user_id),
    )  # fmt: skip
    commands.delete_schedule(store, owner, created.id)
    with pytest.raises(NotFoundError, match=f"schedule {created.id} not found"):
        commands.get_schedule(store, owner, created.id)
    left = store.query_partition(f"{owner.account_id}#team")
    assert [item["SK"]["S"] for item in left] == []


def sweep_from(account: ClockedAccount, due: datetime, moment: datetime) -> SweepReport:
    """The sweep at `moment`, its marker at `due`'s minute: as if it ran every minute
    before with nothing due (a walk over days of empty minutes is the sweep's own test)."""
    pk, sk = sweep_marker_key()
    marker = {**item_key(pk, sk), "Type": {"S": "sweep_marker"}, "minute": {"S": minute_of(due)}}
    account.store.client.put_item(TableName=account.store.table_name, Item=marker)
    return account.sweep_at(moment, {TimerKind.HANDOFF: hand_off})


def on_call_now(account: ClockedAccount) -> dict[str, str | None]:
    """Each schedule's user on call now, as ``GET /oncalls`` answers (gaps as None)."""
    answer = on_call(account.store, account.owner, OnCallFilter())
    return {entry.schedule.id: entry.user.id for entry in answer.oncalls}


def engine_now(account: ClockedAccount, schedule_id: str) -> str | None:
    store, owner = account.store, account.owner
    stored = read_schedule(store, owner.account_id, schedule_id)
    at = store.clock()
    overrides = overrides_between(store, owner.account_id, schedule_id, at, at + DAY)
    return on_call_at(stored.layers(), overrides, at)


def test_the_materialized_now_equals_the_engine_at_every_handoff(
    account: ClockedAccount,
) -> None:
    """Eight-hour turns clipped to 09:00-17:00 on weekdays in Chicago, across the spring
    change (8 March 2026) and an override: after each sweep and between them."""
    store, owner = account.store, account.owner
    users = [owner.user_id, colleague(account, "Bob"), colleague(account, "Cyd")]
    start = datetime(2026, 3, 5, 12, tzinfo=UTC)
    account.at(start)
    request = body(users, time_zone="America/Chicago")
    request["schedule_layers"][0].update(
        start="2026-03-01T00:00:00Z", rotation_virtual_start="2026-03-01T06:00:00Z",
        rotation_turn_length_seconds=8 * 3600,
        restrictions=[{"type": "weekly_restriction", "start_time_of_day": "09:00:00",
                       "duration_seconds": 8 * 3600, "start_day_of_week": day}
                      for day in range(1, 6)],
    )  # fmt: skip
    created = commands.create_schedule(store, owner, ScheduleRequest.model_validate(request))
    commands.create_override(
        store, owner, created.id,
        OverrideRequest(start=start + 2 * DAY, end=start + 2 * DAY + timedelta(hours=5),
                        user_id=users[2]),
    )  # fmt: skip
    fired, moment = 0, start
    while moment < start + 7 * DAY:
        known = read_known(store, owner.account_id, created.id)
        assert known is not None
        for probe in (known.handoff_at - timedelta(seconds=1), known.handoff_at):
            account.at(probe)  # before the sweep fires the handoff, and as it comes due
            assert on_call_now(account).get(created.id) == engine_now(account, created.id)
        moment = known.handoff_at + timedelta(seconds=30)
        assert sweep_from(account, known.handoff_at, moment).failed == 0
        moved = read_known(store, owner.account_id, created.id)
        assert moved is not None
        assert moved.handoff_at > known.handoff_at
        assert on_call_now(account).get(created.id) == engine_now(account, created.id)
        fired += 1
    assert fired >= 10


def test_an_edit_racing_a_handoff_and_a_sweep_that_died_lose_nothing(
    account: ClockedAccount,
) -> None:
    store, owner = account.store, account.owner
    bob, cyd = colleague(account, "Bob"), colleague(account, "Cyd")
    created = commands.create_schedule(
        store, owner, ScheduleRequest.model_validate(body([owner.user_id, bob]))
    )
    known = read_known(store, owner.account_id, created.id)
    assert known is not None
    due = known.handoff_at
    account.at(due + timedelta(seconds=5))  # due, not yet fired: an edit comes first
    commands.update_schedule(
        store, owner, created.id, ScheduleChange.model_validate(body([cyd, bob]))
    )
    edited = read_known(store, owner.account_id, created.id)
    assert edited is not None
    assert edited.handoff_at > due
    report = sweep_from(account, due, due + timedelta(seconds=20))
    assert report.failed == 0
    later = read_known(store, owner.account_id, created.id)
    assert later == edited  # the sweep found nothing of it due
    assert on_call_now(account)[created.id] == engine_now(account, created.id)
    account.at(later.handoff_at + 3 * DAY)  # no sweep for three days: still exact
    assert on_call_now(account)[created.id] == engine_now(account, created.id)
    timer = Timer(owner.account_id, TimerKind.HANDOFF, created.id, later.handoff_at)
    assert hand_off(store, timer)  # the next run fires it, three days late
    assert not hand_off(store, timer)  # once
    assert on_call_now(account)[created.id] == engine_now(account, created.id)


def handoffs(account: ClockedAccount) -> list[tuple[str, str | None, str | None, int]]:
    """The account's ``schedule.handoff`` events, oldest first: when, from, to, version."""
    request = EventRequest(PageRequest(limit=100, descending=False), (EventType.SCHEDULE_HANDOFF,))
    events = account_events(account.store, account.owner, request).items
    return [
        (e.shift_start[5:16], e.previous_user_id, e.user_id, e.schedule.version)
        for e in events
        if isinstance(e, ScheduleHandoff)
    ]


def test_each_handoff_is_one_event_on_the_account_s_events(account: ClockedAccount) -> None:
    """A shift's end fired by the sweep, an override taking effect at once, and its end:
    three handoffs, each once (a handoff fired again, or an edit that changes nobody now,
    adds none); a schedule's first shift is no handoff."""
    store, owner = account.store, account.owner
    ada, bob, cyd = owner.user_id, colleague(account, "Bob"), colleague(account, "Cyd")
    created = commands.create_schedule(
        store, owner, ScheduleRequest.model_validate(body([ada, bob]))
    )
    assert handoffs(account) == []
    known = read_known(store, owner.account_id, created.id)
    assert known is not None
    assert known.current.user_id == bob  # before 09:00: the last turn
    assert sweep_from(account, known.handoff_at, T0 + timedelta(hours=1, seconds=30)).failed == 0
    timer = Timer(owner.account_id, TimerKind.HANDOFF, created.id, known.handoff_at)
    assert not hand_off(store, timer)  # fired again: claimed already, nothing more
    account.at(T0 + timedelta(hours=3))
    cover = OverrideRequest(start=T0 + timedelta(hours=3), end=T0 + timedelta(hours=5), user_id=cyd)
    commands.create_override(store, owner, created.id, cover)
    later = OverrideRequest(start=T0 + 3 * DAY, end=T0 + 4 * DAY, user_id=cyd)
    commands.create_override(store, owner, created.id, later)  # nobody changes now
    moved = read_known(store, owner.account_id, created.id)
    assert moved is not None
    sweep_from(account, moved.handoff_at, T0 + timedelta(hours=5, seconds=30))
    assert handoffs(account) == [
        ("03-01T09:00", bob, ada, 1),
        ("03-01T11:00", ada, cyd, 2),
        ("03-01T13:00", cyd, ada, 3),
    ]
