"""Escalation against an independent model of PagerDuty's rules, on DynamoDB Local and a
simulated clock: random incidents opened by alerts, people's acknowledges, re-triggers and
resolves, policy edits and sweeps (some dying mid-run, before or after a firing's
transaction). After every sweep the pages the table holds are exactly the pages the model
expects by then: each decided once, none it does not expect, none later than the first
sweep at or after its due time.

The model, in PagerDuty's words: a triggered incident pages level 1 at once; a level not
acknowledged within its delay (counted from when it was paged) gives way to the next; after
the last level the policy starts over, ``num_loops`` times, then stays at its last level;
an acknowledge or a resolve stops it, and triggered again it starts over from level 1 (a
new generation); an incident escalates by the policy as it was when it triggered. Round
robin, schedule targets and acknowledgement timeouts have their own tests
(`test_escalation.py`, `test_timer_exactness.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.models import ALERT_EVENTS, IntegrationWithKey, NewIntegration
from incidents.escalation import engine
from incidents.escalation.engine import fire_escalation, pages_of
from incidents.escalation.models import EscalationPolicyRequest
from incidents.escalation.policies import create_policy, replace_policy
from incidents.incident import commands
from incidents.incident.commands import update_incident
from incidents.models import Status
from incidents.requests import UpdateIncident
from incidents.store import Store
from incidents.timers.firing import Fire, FireHere
from incidents.timers.schedule import Timer, TimerKind
from incidents.timers.sweep import sweep
from tests.helpers.clock import ClockedAccount, new_owner
from tests.helpers.models import against_a_model
from tests.helpers.people import new_user

pytestmark = pytest.mark.integration
T0 = datetime(2027, 5, 3, 9, 0, 5, tzinfo=UTC)
Page = tuple[str, int, int, int, str]
"""(incident, generation, loop, level, user)."""


@dataclass(frozen=True)
class Shape:
    """A policy as the model reads it: each level's delay (minutes) and users."""

    levels: tuple[tuple[int, tuple[int, ...]], ...]
    num_loops: int


SHAPES = (
    Shape(((5, (0,)), (10, (1, 2))), 1),
    Shape(((3, (2,)),), 2),
    Shape(((1, (1,)), (2, (0,)), (4, (2, 0))), 0),
)
"""The policies the account switches between (users by index)."""


@dataclass
class Escalating:
    """One incident as the model sees it."""

    shape: Shape
    triggered: bool = True
    generation: int = 1
    loop: int = 0
    level: int = 1
    paged: bool = False
    next_at: datetime | None = None
    stopped: bool = False
    due: datetime | None = None
    """When its escalation next has something to do (None: nothing)."""


@dataclass
class Model:
    """What PagerDuty's rules expect, incident by incident."""

    incidents: dict[str, Escalating] = field(default_factory=dict)
    pages: list[Page] = field(default_factory=list)

    def opened(self, incident: str, shape: Shape, now: datetime) -> None:
        self.incidents[incident] = Escalating(shape, due=now)

    def status(self, incident: str, status: Status, now: datetime) -> None:
        state = self.incidents[incident]
        if status is Status.TRIGGERED and not state.triggered:
            self.incidents[incident] = Escalating(
                state.shape, generation=state.generation + 1, due=now
            )
        elif status is not Status.TRIGGERED and state.triggered:
            state.triggered, state.due = False, None

    def fired(self, incident: str, now: datetime, users: list[str]) -> None:
        """The incident's escalation acting at `now` (its due time come)."""
        state = self.incidents[incident]
        state.due = None
        if state.stopped or not state.triggered:
            return
        if state.paged and state.next_at is not None and state.next_at <= now:
            self._advance(state)
        if not state.stopped and not state.paged:
            delay, targets = state.shape.levels[state.level - 1]
            self.pages += [
                (incident, state.generation, state.loop, state.level, users[target])
                for target in dict.fromkeys(targets)
            ]
            state.paged, state.next_at = True, now + timedelta(minutes=delay)
        state.due = None if state.stopped else state.next_at

    @staticmethod
    def _advance(state: Escalating) -> None:
        if state.level < len(state.shape.levels):
            state.level, state.paged = state.level + 1, False
        elif state.loop < state.shape.num_loops:
            state.loop, state.level, state.paged = state.loop + 1, 1, False
        else:
            state.stopped, state.next_at = True, None

    def due_by(self, now: datetime) -> list[str]:
        return [i for i, state in self.incidents.items() if state.due and state.due <= now]


@dataclass(kw_only=True)
class Account(ClockedAccount):
    """An account with three people, a policy its integration names, and the model."""

    users: list[str]
    policy: str
    integration: IntegrationWithKey
    shape: Shape = SHAPES[0]
    model: Model = field(default_factory=Model)
    opened: int = 0

    def open(self) -> None:
        self.opened += 1
        caller, integration = authenticate(self.store, self.integration.key)
        alert = ALERT_EVENTS.validate_python(
            {"event_action": "trigger", "dedup_key": f"host-{self.opened}",
             "payload": {"summary": "disk full", "source": "db-1", "severity": "error"}}
        )  # fmt: skip
        incident = ingest_alert(self.store, caller, integration, alert).incident_id
        assert incident is not None
        self.model.opened(incident, self.shape, self.now)

    def person(self, status: Status, pick: int) -> None:
        if not self.model.incidents:
            return
        incident = list(self.model.incidents)[pick % len(self.model.incidents)]
        update_incident(self.store, self.owner, incident, UpdateIncident(status=status))
        self.model.status(incident, status, self.now)

    def edit(self, pick: int) -> None:
        self.shape = SHAPES[pick % len(SHAPES)]
        replace_policy(self.store, self.owner, self.policy, request(self.shape, self.users))

    def sweep(self, dying: int | None) -> None:
        """A sweep; with `dying`, the firing of that many-th incident due dies, before its
        transaction if even, after it if odd (its work done, the sweep told it failed)."""
        due = self.model.due_by(self.now)
        victim = due[dying % len(due)] if dying is not None and due else None

        def fire(store: Store, timer: Timer) -> bool:
            if timer.subject == victim and dying is not None and dying % 2 == 0:
                raise RuntimeError("the worker died before its transaction")
            done = fire_escalation(store, timer)
            if timer.subject == victim:
                raise RuntimeError("the worker died after its transaction")
            return done

        handlers: dict[TimerKind, Fire] = {TimerKind.ESCALATION: fire}
        sweep(self.store, self.now, FireHere(handlers))
        for incident in due:
            if incident != victim or dying is None or dying % 2 == 1:
                self.model.fired(incident, self.now, self.users)

    def pages(self) -> list[Page]:
        found = []
        for incident in self.model.incidents:
            for page in pages_of(self.store, self.owner.account_id, incident):
                found.append((incident, page["generation"], page["loop"], page["level"],
                              page["user_id"]))  # fmt: skip
        return found


def request(shape: Shape, users: list[str]) -> EscalationPolicyRequest:
    return EscalationPolicyRequest.model_validate({
        "name": "Payments", "num_loops": shape.num_loops,
        "escalation_rules": [
            {"escalation_delay_in_minutes": delay,
             "targets": [{"type": "user", "id": users[target]} for target in targets]}
            for delay, targets in shape.levels
        ],
    })  # fmt: skip


@pytest.fixture
def account(store: Store) -> Account:
    owner = new_owner()
    users = [new_user(store, owner.account_id, name) for name in ("Ann", "Bo", "Cy")]
    policy = create_policy(store, owner, request(SHAPES[0], users)).id
    integration = create_integration(
        store, owner, NewIntegration(name="prometheus", escalation_policy_id=policy)
    )
    sweep(store, T0 - timedelta(seconds=1), FireHere({}))  # the sweep has been running
    return Account(store=store, now=T0, owner=owner, users=users, policy=policy,
                   integration=integration)  # fmt: skip


ACTIONS = ["open", "open", "ack", "unack", "resolve", "edit", "sweep", "sweep", "sweep", "die"]
STEPS = st.lists(
    st.tuples(st.integers(0, 420), st.sampled_from(ACTIONS), st.integers(0, 7)),
    min_size=5,
    max_size=25,
)


def run(account: Account, steps: list[tuple[int, str, int]]) -> None:
    """The steps, then sweeps until nothing is due; after each sweep, the table's pages
    are the model's."""
    account.now += timedelta(minutes=1)  # the last example's sweeps ran its timers out
    account.model = Model()
    tail = [(600, "sweep", 0)] * 6  # the longest policy runs out within an hour
    for after, action, pick in [*steps, *tail]:
        account.now += timedelta(seconds=after)
        if action == "open":
            account.open()
        elif action in ("ack", "unack", "resolve"):
            status = {"ack": Status.ACKNOWLEDGED, "unack": Status.TRIGGERED}
            account.person(status.get(action, Status.RESOLVED), pick)
        elif action == "edit":
            account.edit(pick)
        else:
            account.sweep(pick if action == "die" else None)
            got, expected = account.pages(), account.model.pages
            assert len(got) == len(set(got)), "a page decided twice"
            assert sorted(got) == sorted(expected), (sorted(got), sorted(expected))


@against_a_model(max_examples=5)
@given(steps=STEPS)
def test_every_page_the_model_expects_is_decided_once_in_its_sweep(
    account: Account, steps: list[tuple[int, str, int]]
) -> None:
    run(account, steps)


MUTATION_STEPS = [(0, "open", 0), (0, "sweep", 0), (30, "ack", 0), (400, "sweep", 0)]
"""An incident paged, acknowledged before its next level: nothing more is due."""


@contextmanager
def ack_ignored() -> Iterator[None]:
    """A mutation: the acknowledge neither stops the escalation nor does the firing look at
    the status."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(commands, "status_operations", lambda *_: [])
        patch.setattr(engine, "_triggered", lambda *_: True)
        yield


@contextmanager
def loops_ignored() -> Iterator[None]:
    """A mutation: the policy never starts over after its last level."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            engine.Escalation,
            "advanced",
            lambda self: (
                replace(self, stopped=True, next_at=None)
                if self.level == len(self.policy.escalation_rules)
                else replace(self, level=self.level + 1, paged=False, next_at=None)
            ),
        )
        yield


@pytest.mark.parametrize("mutation", [ack_ignored, loops_ignored])
def test_the_model_catches_a_broken_engine(account: Account, mutation: object) -> None:
    steps = [*MUTATION_STEPS, (0, "open", 0), (0, "sweep", 0)]
    assert callable(mutation)
    with mutation(), pytest.raises(AssertionError, match="user_"):
        run(account, steps)
