"""Every due timer fires once, whatever set it: random alerts (triggers, acknowledges and
resolves of a few keys, with both lifecycle timeouts), people's changes, heartbeat pings
(the heartbeat disabled and enabled too: none of its expiries' incidents is ever forgotten
open),
maintenance windows that resolve their alerts at their end (ended early, sometimes) and
sweeps on a simulated clock, with the table as the oracle. Before each sweep the test
lists the account's timers that are due; the sweep must fire each of them exactly once,
fire nothing else and leave none of them behind, save one kind of exception: an incident
that timer resolves loses its acknowledgement timer in the resolve's transaction (the sweep
then finds it gone, or loses its claim)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dynashard import GrowthPolicy, ShardCounts, Table, build_key, sharded_key
from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.models import ALERT_EVENTS, IntegrationWithKey, NewIntegration
from incidents.heartbeats.commands import (
    create_heartbeat,
    get_heartbeat,
    ping_heartbeat,
    update_heartbeat,
)
from incidents.heartbeats.models import HeartbeatChanges, NewHeartbeat
from incidents.incident.commands import load_summary, update_incident
from incidents.items import deserialize
from incidents.keys import TIMER_SHARDS
from incidents.maintenance.commands import create_window, end_window
from incidents.maintenance.models import NewMaintenanceWindow
from incidents.models import Status
from incidents.requests import UpdateIncident
from incidents.store import Caller, Store
from incidents.table import TABLE_SCHEMA
from incidents.timers.firing import Fire, FireHere
from incidents.timers.schedule import Timer, TimerKind
from incidents.timers.sweep import sweep
from lambdas.timer_worker import HANDLERS
from tests.helpers.clock import ClockedAccount, new_owner
from tests.helpers.models import against_a_model

pytestmark = pytest.mark.integration
T0 = datetime(2027, 4, 1, 6, 0, 30, tzinfo=UTC)
BEAT = "exactness"
KEYS = 3
Due = tuple[TimerKind, str, datetime]


@dataclass(kw_only=True)
class Account(ClockedAccount):
    """One account's integration (both timeouts) and heartbeat, on a clock the test moves,
    and what each sweep's handlers did."""

    integration: IntegrationWithKey
    incidents: list[str] = field(default_factory=list)
    fired: list[Due] = field(default_factory=list)
    lost: list[Due] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    windows: dict[str, datetime] = field(default_factory=dict)
    """Each window and its end."""

    def alert(self, action: str, key: int) -> None:
        body = {"summary": "queue backed up", "source": "worker", "severity": "error"}
        alert = ALERT_EVENTS.validate_python(
            {"event_action": action, "dedup_key": f"k{key}",
             **({"payload": body} if action == "trigger" else {})}
        )  # fmt: skip
        caller, integration = authenticate(self.store, self.integration.key)
        answer = ingest_alert(self.store, caller, integration, alert)
        if answer.incident_id and answer.incident_id not in self.incidents:
            self.incidents.append(answer.incident_id)

    def person(self, status: Status, pick: int) -> None:
        if self.incidents:
            incident = self.incidents[pick % len(self.incidents)]
            update_incident(self.store, self.owner, incident, UpdateIncident(status=status))

    def window(self, minutes: int) -> None:
        """A window on the integration from now, or the latest one ended early."""
        if minutes == 0:
            ongoing = [window for window, end in self.windows.items() if end > self.now]
            if ongoing:
                end_window(self.store, self.owner, ongoing[-1])
                self.windows[ongoing[-1]] = self.now
            return
        request = NewMaintenanceWindow.model_validate(
            {"integration_id": self.integration.id, "start_time": self.now,
             "end_time": self.now + timedelta(minutes=minutes + 1),
             "description": "upgrade", "resolve_on_end": True}
        )  # fmt: skip
        self.windows[create_window(self.store, self.owner, request).id] = request.end_time

    def ping(self) -> None:
        sender = Caller(self.owner.account_id, self.integration.id)
        ping_heartbeat(self.store, sender, self.integration.id, BEAT)

    def toggle(self, enabled: bool) -> None:
        update_heartbeat(self.store, self.owner, BEAT, HeartbeatChanges(enabled=enabled))

    def expiry_incidents(self, seen: set[str]) -> None:
        """Every incident the heartbeat's expiries opened is named by it or resolved: none
        is forgotten open (`seen`: those named so far, added to)."""
        named = get_heartbeat(self.store, self.owner, BEAT).incident_id
        seen.update(filter(None, [named]))
        for incident in seen - {named}:
            status = load_summary(self.store, self.owner, incident).status
            assert status is Status.RESOLVED, f"{incident} forgotten while {status}"

    def timers(self) -> set[Due]:
        """Every timer of the account, as the table holds it."""
        base = build_key(self.owner.account_id, "timer")
        found: set[Due] = set()
        for shard in range(TIMER_SHARDS):
            for item in self.store.query_partition(sharded_key(base, shard, TIMER_SHARDS)):
                values = deserialize(item)
                due = datetime.fromisoformat(values["due_at"])
                found.add((TimerKind(values["kind"]), values["subject"], due))
        return found

    def recording(self) -> dict[TimerKind, Fire]:
        """The cloud's handlers, each firing noted as fired or lost."""

        def wrap(fire: Fire) -> Fire:
            def noted(store: Store, timer: Timer) -> bool:
                try:
                    done = fire(store, timer)
                except Exception as error:  # the sweep counts it; the test names it
                    self.failures.append(f"{timer}: {error!r}")
                    raise
                (self.fired if done else self.lost).append(
                    (timer.kind, timer.subject, timer.due_at)
                )
                return done

            return noted

        return {kind: wrap(fire) for kind, fire in HANDLERS.items()}


@pytest.fixture
def account(store: Store) -> Account:
    owner = new_owner()
    request = NewIntegration(name="queue", auto_resolve_timeout=240, acknowledgement_timeout=120)
    built = Account(
        store=store, now=T0, owner=owner, integration=create_integration(store, owner, request)
    )
    store.due = ShardCounts(  # a few shards a minute: every sweep reads them all
        Table(store.client, store.table_name, TABLE_SCHEMA), policy=GrowthPolicy(default_count=2)
    )
    beat = {"name": BEAT, "interval": 3, "integration_id": built.integration.id}
    create_heartbeat(store, owner, NewHeartbeat.model_validate(beat))
    sweep(store, T0, FireHere(HANDLERS))  # the schedule has been running
    return built


ACTIONS = ["trigger", "trigger", "acknowledge", "resolve", "ack", "unack", "fix", "ping",
           "window", "disable", "enable", "sweep", "sweep"]  # fmt: skip
ORPHANED = [(200, "sweep", 0), (1, "disable", 0), (1, "enable", 0), (200, "sweep", 0)]
"""Round 6's minimized case: expired, disabled, enabled and expired again opened a second
incident and forgot the first, open for ever."""
STEPS = st.lists(
    st.tuples(st.integers(0, 150), st.sampled_from(ACTIONS), st.integers(0, KEYS - 1)),
    min_size=5,
    max_size=20,
)


@against_a_model(max_examples=5)
@given(steps=STEPS)
@example(steps=ORPHANED)
def test_every_due_timer_fires_once_in_the_first_sweep_after_it(
    account: Account, steps: list[tuple[int, str, int]]
) -> None:
    handlers = account.recording()
    account.now += timedelta(minutes=30)  # each example after the last one's timers
    account.toggle(enabled=True)
    account.ping()
    expiries: set[str] = set()
    for after, action, pick in [*steps, (600, "sweep", 0)]:  # the last sweep: all due
        account.now += timedelta(seconds=after)
        if action in ("trigger", "acknowledge", "resolve"):
            account.alert(action, pick)
        elif action in ("ack", "unack", "fix"):
            status = {"ack": Status.ACKNOWLEDGED, "unack": Status.TRIGGERED}.get(action)
            account.person(status or Status.RESOLVED, pick)
        elif action == "ping":
            account.ping()
        elif action == "window":
            account.window(pick)
        elif action in ("disable", "enable"):
            account.toggle(enabled=action == "enable")
        else:
            due = {timer for timer in account.timers() if timer[2] <= account.now}
            fired_before = set(account.fired)
            account.fired.clear()
            account.lost.clear()
            report = sweep(account.store, account.now, FireHere(handlers))
            assert not account.failures, account.failures
            handled = set(account.fired) | set(account.lost)
            assert handled <= due, "nothing that was not due"
            assert len(account.fired) == len(set(account.fired)) == report.fired
            assert not set(account.fired) & fired_before, "never twice"
            for kind, incident, _ in [*account.lost, *(due - handled)]:
                # lost its claim, or was never listed: cleared by a resolve this sweep made
                assert kind is TimerKind.ACKNOWLEDGEMENT
                assert load_summary(account.store, account.owner, incident).status is (
                    Status.RESOLVED
                )
            left = {timer for timer in account.timers() if timer[2] <= account.now}
            assert not left, "none left behind"
            account.expiry_incidents(expiries)
            account.fired.extend(fired_before)
