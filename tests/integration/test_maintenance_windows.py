"""Maintenance windows on DynamoDB Local, on a simulated clock: while one is on, its
integration's (or team's) alerts open and move nothing and are kept as suppressed, counted
once; it is ended early, not deleted, once started; ``resolve_on_end`` resolves what still
fires when its timer comes due in the sweep."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from dynashard import GrowthPolicy, ShardCounts, Table
from incidents.account_limits import AccountLimits, LimitReachedError
from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import create_integration
from incidents.alerts.models import (
    ALERT_EVENTS,
    AlertAccepted,
    AlertStatus,
    IntegrationWithKey,
    NewIntegration,
    SuppressedStatus,
)
from incidents.errors import ConflictError, NotFoundError
from incidents.incident.commands import load_summary
from incidents.incident.queries import account_incidents
from incidents.maintenance.commands import (
    WindowTimesError,
    create_window,
    delete_window,
    end_window,
    get_window,
    list_suppressed,
    list_windows,
    resolve_at_end,
)
from incidents.maintenance.models import (
    MaintenanceWindow,
    NewMaintenanceWindow,
    SuppressedAlert,
    WindowStatus,
)
from incidents.models import State, Status
from incidents.paging import PageRequest
from incidents.requests import CreateTeam
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.team_commands import create_team
from incidents.timers.firing import FireHere
from incidents.timers.schedule import TimerKind
from incidents.timers.sweep import SweepReport, sweep
from tests.helpers.clock import ClockedAccount, new_owner

pytestmark = pytest.mark.integration
T0 = datetime(2027, 3, 1, 9, 0, 30, tzinfo=UTC)
HANDLERS = {TimerKind.MAINTENANCE_END: resolve_at_end}


@dataclass(kw_only=True)
class World(ClockedAccount):
    """An account, its team and two integrations: one routed to the team, one to no team,
    on a clock the test moves."""

    team: str
    routed: IntegrationWithKey
    loose: IntegrationWithKey

    def window(self, *, minutes: tuple[int, int] = (10, 70), **fields: Any) -> MaintenanceWindow:
        """A window from `minutes` after T0 to the second, on the routed integration unless
        `fields` name a scope."""
        scope = (
            {}
            if {"team_id", "integration_id"} & set(fields)
            else {"integration_id": self.routed.id}
        )
        request = NewMaintenanceWindow.model_validate(
            {"start_time": (T0 + timedelta(minutes=minutes[0])).isoformat(),
             "end_time": (T0 + timedelta(minutes=minutes[1])).isoformat(),
             "description": "database upgrade", **scope, **fields}
        )  # fmt: skip
        return create_window(self.store, self.owner, request)

    def send(
        self, action: str, key: str | None = None, *, via: IntegrationWithKey | None = None,
        summary: str = "disk full",
    ) -> AlertAccepted:  # fmt: skip
        """One alert of `via` (the routed integration by default)."""
        integration = via or self.routed
        body: dict[str, Any] = {"event_action": action, **({"dedup_key": key} if key else {})}
        if action == "trigger":
            body["payload"] = {"summary": summary, "source": "db-1", "severity": "critical"}
        caller = Caller(self.owner.account_id, integration.id)
        return ingest_alert(self.store, caller, integration, ALERT_EVENTS.validate_python(body))

    def suppressed(self, window_id: str) -> dict[str, SuppressedAlert]:
        page = list_suppressed(self.store, self.owner, window_id, limit=100)
        return {alert.dedup_key: alert for alert in page.items}

    def open_incidents(self) -> list[str]:
        page = account_incidents(self.store, self.owner, State.OPEN, PageRequest(limit=100))
        return [summary.id for summary in page.items]

    def sweep(self, moment: datetime) -> SweepReport:
        return self.sweep_at(moment, HANDLERS)


def build_world(store: Store) -> World:
    owner = new_owner()
    team = create_team(store, owner, CreateTeam(name="Storage")).id
    routed = create_integration(store, owner, NewIntegration(name="prometheus", team_id=team))
    loose = create_integration(store, owner, NewIntegration(name="cron"))
    return World(store=store, now=T0, owner=owner, team=team, routed=routed, loose=loose)


@pytest.fixture(scope="module")
def shared_store(dynamodb: Any, module_table: str) -> Iterator[Store]:
    """One store for the module's tests that never sweep (each its own account)."""
    built = build_store(dynamodb, module_table, b"test-cursor-secret-" * 2)
    yield built
    built.engine.close()


@pytest.fixture
def world(shared_store: Store) -> World:
    return build_world(shared_store)


@pytest.fixture
def swept(store: Store) -> World:
    """A world on a table of its own (the sweep's marker is the table's), one shard a
    minute (a sweep reads every minute since the last)."""
    store.due = ShardCounts(
        Table(store.client, store.table_name, TABLE_SCHEMA), policy=GrowthPolicy(default_count=1)
    )
    built = build_world(store)
    sweep(store, T0, FireHere(HANDLERS))  # the schedule has been running
    return built


def test_alerts_during_a_window_open_and_move_nothing(world: World) -> None:
    window = world.window(minutes=(10, 70))
    assert window.status is WindowStatus.SCHEDULED
    before = world.send("trigger", "db-1/disk")
    assert before.status is AlertStatus.OPENED, "before its start"
    assert before.incident_id is not None

    world.at(T0 + timedelta(minutes=10))
    for action, key in (("trigger", "db-2/cpu"), ("trigger", "db-1/disk"),
                        ("acknowledge", "db-1/disk"), ("resolve", "db-1/disk")):  # fmt: skip
        answer = world.send(action, key)
        assert answer == AlertAccepted(status=AlertStatus.SUPPRESSED, dedup_key=key,
                                       incident_id=None), action  # fmt: skip
    assert world.open_incidents() == [before.incident_id], "nothing opened"
    assert load_summary(world.store, world.owner, before.incident_id).status is Status.TRIGGERED
    assert world.send("trigger", "other", via=world.loose).status is AlertStatus.OPENED

    world.at(T0 + timedelta(minutes=70))  # its end: the window is [start, end)
    assert world.send("acknowledge", "db-1/disk").status is AlertStatus.ACKNOWLEDGED
    assert world.send("trigger", "db-2/cpu").status is AlertStatus.OPENED
    assert get_window(world.store, world.owner, window.id).status is WindowStatus.ENDED


def test_a_window_on_a_team_holds_the_team_s_integrations_only(world: World) -> None:
    world.window(minutes=(0, 30), team_id=world.team)
    world.at(T0 + timedelta(minutes=1))
    assert world.send("trigger", "a").status is AlertStatus.SUPPRESSED
    assert world.send("trigger", "b", via=world.loose).status is AlertStatus.OPENED


def test_suppressed_alerts_are_counted_once_and_listed(world: World) -> None:
    window = world.window(minutes=(0, 30))
    world.at(T0 + timedelta(minutes=1))
    first = world.send("trigger")  # no dedup key: one is made up, as when it opens
    assert world.send("trigger") == first, "a retry: its first answer, counted once"
    world.send("trigger", "db-1/disk")
    world.at(T0 + timedelta(minutes=2))
    world.send("trigger", "db-1/disk", summary="disk fuller")
    world.send("acknowledge", "db-1/disk")
    world.send("acknowledge", "db-1/disk")  # the same body again: a retry
    world.send("resolve", "late")  # a key the window never saw triggered

    assert get_window(world.store, world.owner, window.id).suppressed_alerts == 5
    kept = world.suppressed(window.id)
    assert set(kept) == {first.dedup_key, "db-1/disk", "late"}
    disk = kept["db-1/disk"]
    assert (disk.count, disk.summary, disk.last_action.value, disk.status) == (
        3, "disk fuller", "acknowledge", SuppressedStatus.TRIGGERED
    )  # fmt: skip
    assert (disk.integration_id, disk.severity and disk.severity.value) == (
        world.routed.id, "critical"
    )  # fmt: skip
    assert (disk.first_seen_at, disk.last_seen_at) == (
        "2027-03-01T09:01:30.000000Z", "2027-03-01T09:02:30.000000Z"
    )  # fmt: skip
    late = kept["late"]
    assert (late.status, late.summary, late.count) == (SuppressedStatus.RESOLVED, None, 1)


def test_ending_early_stops_suppression_at_once_and_a_started_window_stays(
    world: World,
) -> None:
    window = world.window(minutes=(0, 60))
    world.at(T0 + timedelta(minutes=5))
    assert world.send("trigger", "a").status is AlertStatus.SUPPRESSED
    with pytest.raises(ConflictError, match="end it early instead"):
        delete_window(world.store, world.owner, window.id)

    ended = end_window(world.store, world.owner, window.id)
    assert (ended.status, ended.ended_early) == (WindowStatus.ENDED, True)
    assert (ended.end_time, ended.suppressed_alerts) == ("2027-03-01T09:05:30.000000Z", 1)
    reopened = world.send("trigger", "a", summary="still full")  # not a retry: a new body
    assert reopened.status is AlertStatus.OPENED, "at once"
    assert get_window(world.store, world.owner, window.id) == ended
    with pytest.raises(ConflictError, match="has ended"):
        end_window(world.store, world.owner, window.id)
    with pytest.raises(ConflictError):
        delete_window(world.store, world.owner, window.id)


def test_a_window_not_started_is_deleted_not_ended(world: World) -> None:
    window = world.window(minutes=(30, 60))
    with pytest.raises(ConflictError, match="delete it instead"):
        end_window(world.store, world.owner, window.id)
    delete_window(world.store, world.owner, window.id)
    with pytest.raises(NotFoundError):
        get_window(world.store, world.owner, window.id)
    world.at(T0 + timedelta(minutes=40))
    assert world.send("trigger", "a").status is AlertStatus.OPENED, "it suppresses nothing"


def test_windows_list_newest_first_in_pages(world: World) -> None:
    made = [world.window(minutes=(n, 60)).id for n in range(3)]
    first = list_windows(world.store, world.owner, limit=2)
    rest = list_windows(world.store, world.owner, limit=2, cursor=first.next_cursor)
    listed = [w.id for w in [*first.items, *rest.items]]
    assert listed == sorted(made, reverse=True), "by id: newest first (to the second)"
    assert (first.has_more, rest.has_more) == (True, False)
    stranger = Caller(new_id("acct"), new_id("user"))
    assert list_windows(world.store, stranger).items == []
    with pytest.raises(NotFoundError):
        get_window(world.store, stranger, made[0])
    with pytest.raises(NotFoundError):
        list_suppressed(world.store, stranger, made[0])


def test_a_start_in_the_past_is_now(world: World) -> None:
    world.at(T0 + timedelta(minutes=20))
    window = world.window(minutes=(0, 60))
    assert (window.start_time, window.status) == ("2027-03-01T09:20:30.000000Z", "ongoing")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"integration_id": None}, "integration_id: leave it out rather than null"),
        ({"integration_id": "intg_" + "x" * 26}, "integration_id"),
        ({"team_id": "team_" + "x" * 27}, "exactly one"),  # beside the integration
        ({"end_time": "2027-03-01T09:00:30Z"}, "after start_time"),  # before the start
        ({"start_time": "2027-03-01"}, "RFC 3339"),
        ({"start_time": "2027-03-01T10:00:00"}, "RFC 3339"),  # no offset
        ({"start_time": 1_800_000_000}, "RFC 3339"),
        ({"end_time": "2027-02-30T10:00:00Z"}, "exists"),
        ({"description": "two\nlines"}, "description"),
        ({"resolve_on_end": "yes"}, "resolve_on_end"),
    ],
)
def test_a_bad_window_is_refused_naming_the_problem(
    world: World, fields: dict[str, Any], problem: str
) -> None:
    body = {"integration_id": world.routed.id, "description": "upgrade",
            "start_time": "2027-03-01T10:00:00Z", "end_time": "2027-03-01T12:00:00+01:00",
            **fields}  # fmt: skip
    with pytest.raises(ValidationError, match=problem):
        NewMaintenanceWindow.model_validate(body)


def test_a_window_names_exactly_one_scope() -> None:
    times = {"start_time": "2027-03-01T10:00:00Z", "end_time": "2027-03-01T11:00:00Z"}
    with pytest.raises(ValidationError, match="exactly one"):
        NewMaintenanceWindow.model_validate({**times, "description": "upgrade"})


def test_times_only_the_clock_refuses(world: World) -> None:
    world.at(T0 + timedelta(hours=2))
    with pytest.raises(WindowTimesError, match="future"):
        world.window(minutes=(0, 60))
    with pytest.raises(WindowTimesError, match="90 days"):
        world.window(minutes=(120, 120 + 90 * 24 * 60 + 1))
    assert world.window(minutes=(120, 120 + 90 * 24 * 60)).status is WindowStatus.ONGOING


def test_a_window_names_a_team_or_integration_of_its_account(world: World) -> None:
    with pytest.raises(NotFoundError, match="team"):
        world.window(team_id=new_id("team"))
    with pytest.raises(NotFoundError, match="integration"):
        world.window(integration_id=new_id("intg"))
    theirs = create_integration(
        world.store, Caller(new_id("acct"), new_id("user")), NewIntegration(name="theirs")
    )
    with pytest.raises(NotFoundError):
        world.window(integration_id=theirs.id)
    assert list_windows(world.store, world.owner).items == []


def test_an_account_s_windows_not_yet_ended_are_capped(world: World) -> None:
    """Creates at the same moment count under the live set's version: no two pass the cap."""
    world.store.limits = AccountLimits(maintenance_windows=3)
    world.window(minutes=(0, 5))
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda _: _outcome(world.window), range(8)))
    assert sorted(outcomes) == ["created"] * 2 + ["too many"] * 6
    world.at(T0 + timedelta(minutes=5))  # the first has ended: it no longer counts
    assert world.window(minutes=(10, 20)).status is WindowStatus.SCHEDULED


def _outcome(create: Callable[[], object]) -> str:
    try:
        create()
    except LimitReachedError:
        return "too many"
    return "created"


def test_resolve_on_end_resolves_what_still_fires_when_its_timer_comes_due(
    swept: World,
) -> None:
    window = swept.window(minutes=(0, 30), resolve_on_end=True)
    swept.at(T0 + timedelta(minutes=1))
    swept.send("trigger", "firing")
    swept.send("trigger", "fixed")
    swept.send("resolve", "fixed")
    swept.send("acknowledge", "acked")  # an acknowledge ends nothing
    assert swept.sweep(T0 + timedelta(minutes=29, seconds=29)).fired == 0

    fired = swept.sweep(T0 + timedelta(minutes=31))
    assert (fired.fired, fired.failed) == (1, 0)
    kept = swept.suppressed(window.id)
    assert {key: (a.status, a.resolved_at_end) for key, a in kept.items()} == {
        "firing": (SuppressedStatus.RESOLVED, True),
        "fixed": (SuppressedStatus.RESOLVED, False),
        "acked": (SuppressedStatus.RESOLVED, True),
    }
    assert swept.open_incidents() == [], "resolving opens nothing"
    assert swept.sweep(T0 + timedelta(minutes=40)).fired == 0, "once"


def test_without_resolve_on_end_nothing_happens_at_the_end(swept: World) -> None:
    window = swept.window(minutes=(0, 30))
    swept.at(T0 + timedelta(minutes=1))
    swept.send("trigger", "firing")
    assert swept.sweep(T0 + timedelta(minutes=35)).fired == 0
    assert swept.suppressed(window.id)["firing"].status is SuppressedStatus.TRIGGERED
    assert swept.open_incidents() == [], "PagerDuty's: never opened later"


def test_ending_early_moves_the_end_timer_and_deleting_clears_it(swept: World) -> None:
    window = swept.window(minutes=(0, 60), resolve_on_end=True)
    unstarted = swept.window(minutes=(30, 40), resolve_on_end=True)
    swept.at(T0 + timedelta(minutes=5))
    swept.send("trigger", "firing")
    end_window(swept.store, swept.owner, window.id)
    delete_window(swept.store, swept.owner, unstarted.id)
    assert swept.sweep(T0 + timedelta(minutes=6)).fired == 1
    assert swept.suppressed(window.id)["firing"].resolved_at_end
    assert swept.sweep(T0 + timedelta(minutes=61)).fired == 0, "neither the old end nor one deleted"
