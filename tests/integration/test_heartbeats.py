"""Heartbeats and the sweep on DynamoDB Local, on a simulated clock: a late heartbeat opens
one incident per expiry, the next ping resolves it, and no timer fires twice or not at all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynashard import GrowthPolicy, ShardCounts, Table
from incidents.alerts.integrations import create_integration, delete_integration
from incidents.alerts.models import IntegrationWithKey, NewIntegration
from incidents.errors import NotFoundError
from incidents.heartbeats.commands import (
    create_heartbeat,
    delete_heartbeat,
    expire_heartbeat,
    get_heartbeat,
    list_heartbeats,
    ping_heartbeat,
    update_heartbeat,
)
from incidents.heartbeats.models import HeartbeatChanges, HeartbeatStatus, NewHeartbeat
from incidents.incident.commands import load_summary, update_incident
from incidents.models import Severity, Status
from incidents.models import parse_timestamp as parse
from incidents.requests import UpdateIncident
from incidents.store import Caller, Store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.timers.firing import FireHere
from incidents.timers.schedule import Timer, TimerKind
from incidents.timers.sweep import SweepReport, sweep
from tests.helpers.clock import ClockedAccount, new_owner
from tests.helpers.models import against_a_model

pytestmark = pytest.mark.integration
T0 = datetime(2027, 1, 15, 9, 0, 30, tzinfo=UTC)
HANDLERS = {TimerKind.HEARTBEAT: expire_heartbeat}


@dataclass(kw_only=True)
class World(ClockedAccount):
    """An account and its integration, on a clock the test moves."""

    integration: IntegrationWithKey
    incidents: list[str] = field(default_factory=list)

    def sweep(self, moment: datetime, deadline: Callable[[], bool] = lambda: False) -> SweepReport:
        return self.sweep_at(moment, HANDLERS, deadline=deadline)

    def ping(self, name: str, moment: datetime) -> str | None:
        self.at(moment)
        sender = Caller(self.owner.account_id, self.integration.id)
        return ping_heartbeat(self.store, sender, self.integration.id, name).resolved_incident_id


@pytest.fixture
def world(store: Store) -> World:
    owner = new_owner()
    cron = create_integration(store, owner, NewIntegration(name="cron"))
    return World(store=store, now=T0, owner=owner, integration=cron)


def new_heartbeat(world: World, name: str = "nightly-backup", **fields: object) -> None:
    request = NewHeartbeat.model_validate(
        {"name": name, "interval": 5, "integration_id": world.integration.id, **fields}
    )
    create_heartbeat(world.store, world.owner, request)


def test_a_late_heartbeat_opens_one_incident_and_the_next_ping_resolves_it(world: World) -> None:
    new_heartbeat(world)
    assert world.sweep(T0 + timedelta(minutes=4, seconds=59)).fired == 0

    fired = world.sweep(T0 + timedelta(minutes=5, seconds=1))
    expired = get_heartbeat(world.store, world.owner, "nightly-backup")
    assert (fired.fired, expired.status) == (1, HeartbeatStatus.EXPIRED)
    assert expired.incident_id is not None
    incident = load_summary(world.store, world.owner, expired.incident_id)
    assert (incident.title, incident.status) == ("nightly-backup is expired", Status.TRIGGERED)
    assert world.sweep(T0 + timedelta(minutes=6)).fired == 0, "one incident per expiry"

    assert world.ping("nightly-backup", T0 + timedelta(minutes=7)) == expired.incident_id
    assert load_summary(world.store, world.owner, expired.incident_id).status is Status.RESOLVED
    pinged = get_heartbeat(world.store, world.owner, "nightly-backup")
    assert pinged.status is HeartbeatStatus.ACTIVE
    assert pinged.expires_at == "2027-01-15T09:12:30.000000Z"
    assert world.sweep(T0 + timedelta(minutes=12, seconds=1)).fired == 1, "the next expiry"


def test_a_ping_moves_the_expiry_one_interval_on(world: World) -> None:
    new_heartbeat(world)
    world.ping("nightly-backup", T0 + timedelta(minutes=4))
    assert world.sweep(T0 + timedelta(minutes=8)).fired == 0
    assert world.sweep(T0 + timedelta(minutes=9, seconds=1)).fired == 1


def test_a_claim_lost_to_a_ping_opens_nothing(world: World) -> None:
    """The sweep read the timer, then a ping moved it before the claim."""
    new_heartbeat(world)
    due = get_heartbeat(world.store, world.owner, "nightly-backup").expires_at
    assert due is not None
    read = Timer(world.owner.account_id, TimerKind.HEARTBEAT, "nightly-backup", parse(due))
    world.ping("nightly-backup", T0 + timedelta(minutes=4, seconds=59))
    world.at(T0 + timedelta(minutes=5, seconds=1))
    assert not expire_heartbeat(world.store, read)
    assert get_heartbeat(world.store, world.owner, "nightly-backup").incident_id is None


def test_disabled_heartbeats_never_expire_and_deleted_ones_leave_no_timer(world: World) -> None:
    new_heartbeat(world, "quiet", enabled=False)
    new_heartbeat(world, "gone")
    delete_heartbeat(world.store, world.owner, "gone")
    assert world.sweep(T0 + timedelta(hours=2)).fired == 0
    update_heartbeat(world.store, world.owner, "quiet", HeartbeatChanges(enabled=True))
    enabled = get_heartbeat(world.store, world.owner, "quiet")
    assert enabled.expires_at == "2027-01-15T11:05:30.000000Z"
    assert world.sweep(T0 + timedelta(hours=2, minutes=6)).fired == 1
    names = [beat.name for beat in list_heartbeats(world.store, world.owner).items]
    assert names == ["quiet"]


def test_an_expiry_s_incident_is_never_forgotten_while_open(world: World) -> None:
    """Disabled and enabled again while its incident is open, a heartbeat stays expired
    with no expiry running (round 6 found a second incident opened and the first
    forgotten); once a person resolves that incident, enabling starts the interval."""
    new_heartbeat(world)
    world.sweep(T0 + timedelta(minutes=5, seconds=1))
    first = get_heartbeat(world.store, world.owner, "nightly-backup").incident_id
    assert first is not None
    for enabled in (False, True):
        update_heartbeat(
            world.store, world.owner, "nightly-backup", HeartbeatChanges(enabled=enabled)
        )
    kept = get_heartbeat(world.store, world.owner, "nightly-backup")
    assert (kept.status, kept.incident_id, kept.expires_at) == (
        HeartbeatStatus.EXPIRED,
        first,
        None,
    )
    assert world.sweep(T0 + timedelta(hours=1)).fired == 0, "no second expiry"
    update_incident(world.store, world.owner, first, UpdateIncident(status=Status.RESOLVED))
    world.at(T0 + timedelta(hours=1))
    update_heartbeat(world.store, world.owner, "nightly-backup", HeartbeatChanges(interval=10))
    fresh = get_heartbeat(world.store, world.owner, "nightly-backup")
    assert (fresh.status, fresh.incident_id) == (HeartbeatStatus.ACTIVE, None)
    assert fresh.expires_at == "2027-01-15T10:10:30.000000Z"


def test_a_heartbeat_whose_integration_was_deleted_still_expires(world: World) -> None:
    new_heartbeat(world)
    delete_integration(world.store, world.owner, world.integration.id)
    assert world.sweep(T0 + timedelta(minutes=5, seconds=1)).fired == 1
    expired = get_heartbeat(world.store, world.owner, "nightly-backup")
    assert expired.incident_id is not None
    assert load_summary(world.store, world.owner, expired.incident_id).severity is Severity.SEV2


def test_a_timer_whose_firing_failed_is_fired_by_a_later_run(world: World) -> None:
    """The marker never passes a minute whose timers failed: every run tries them again."""
    new_heartbeat(world)
    calls: list[Timer] = []

    def flaky(store: Store, timer: Timer) -> bool:
        calls.append(timer)
        if len(calls) == 1:
            raise ConnectionError("the table went away")
        return expire_heartbeat(store, timer)

    handlers = {TimerKind.HEARTBEAT: flaky}
    sweep(world.store, T0, FireHere(handlers))  # the schedule has been running
    world.at(T0 + timedelta(minutes=8))  # its minute and the next one settle in this run
    assert sweep(world.store, world.now, FireHere(handlers)).failed == 1
    world.at(T0 + timedelta(minutes=20))  # the failed minute long settled
    retried = sweep(world.store, world.now, FireHere(handlers))
    assert (retried.fired, retried.failed) == (1, 0)
    assert get_heartbeat(world.store, world.owner, "nightly-backup").incident_id is not None


def test_another_integrations_ping_is_a_404(world: World) -> None:
    new_heartbeat(world)
    other = create_integration(world.store, world.owner, NewIntegration(name="other"))
    sender = Caller(world.owner.account_id, other.id)
    with pytest.raises(NotFoundError):
        ping_heartbeat(world.store, sender, other.id, "nightly-backup")


def test_a_sweep_cut_short_goes_on_from_where_it_stopped(world: World) -> None:
    world.sweep(T0)  # the schedule has been running: its marker is there
    for n in range(30):
        new_heartbeat(world, f"job-{n:02d}", interval=1 + n % 3)
    pages = iter(range(100))
    cut = world.sweep(T0 + timedelta(minutes=4), deadline=lambda: next(pages) >= 2)
    rest = world.sweep(T0 + timedelta(minutes=4))
    again = world.sweep(T0 + timedelta(minutes=4, seconds=30))
    assert not cut.finished
    assert cut.fired + rest.fired == 30
    assert again.fired == 0


@dataclass(frozen=True)
class Step:
    """Seconds after the last step, and what happens then."""

    after: int
    action: str  # "ping", "sweep" or "toggle"


STEPS = st.lists(
    st.builds(
        Step,
        after=st.integers(0, 240),
        action=st.sampled_from(["ping", "sweep", "sweep", "toggle"]),
    ),
    min_size=1,
    max_size=20,
)


@against_a_model(max_examples=15)
@given(steps=STEPS)
def test_every_due_expiry_fires_once_in_the_sweep_after_it(world: World, steps: list[Step]) -> None:
    """A model of one heartbeat (3 minutes) driven by random pings, sweeps and toggles on
    the simulated clock: each sweep fires exactly the expiries the model says are due.
    (One shard a minute: a sweep reads every minute since the last, and the examples
    share the table's marker.)"""
    world.store.due = ShardCounts(
        Table(world.store.client, world.store.table_name, TABLE_SCHEMA),
        policy=GrowthPolicy(default_count=1),
    )
    name = new_id("beat").lower()
    world.at(world.now + timedelta(minutes=10))
    new_heartbeat(world, name, interval=3)
    due: datetime | None = world.now + timedelta(minutes=3)
    enabled, expired = True, False
    for step in steps:
        moment = world.now + timedelta(seconds=step.after)
        if step.action == "ping":
            world.ping(name, moment)
            expired = False
            due = moment + timedelta(minutes=3) if enabled else None
        elif step.action == "toggle":
            world.at(moment)
            enabled = not enabled
            update_heartbeat(world.store, world.owner, name, HeartbeatChanges(enabled=enabled))
            expired = False  # disabled, then enabled afresh
            due = moment + timedelta(minutes=3) if enabled else None
        else:
            expected = int(due is not None and due <= moment)
            report = world.sweep(moment)
            assert report.fired == expected, (step, due, moment)
            if due is not None and expected:
                assert report.late_seconds == [(moment - due).total_seconds()]
            if expected:
                expired, due = True, None
    beat = get_heartbeat(world.store, world.owner, name)
    status = HeartbeatStatus.EXPIRED if expired else HeartbeatStatus.ACTIVE
    assert beat.status is (status if enabled else HeartbeatStatus.DISABLED)
    delete_heartbeat(world.store, world.owner, name)  # its timer goes: the next example's own
