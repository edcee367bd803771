"""Events in (issue 39, points 1-3 in the domain): integrations and their keys, and alerts
that open, join, acknowledge and resolve incidents, on DynamoDB Local."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.alerts import ingest
from incidents.alerts.ingest import alert_count, ingest_alert
from incidents.alerts.integrations import (
    authenticate,
    create_integration,
    delete_integration,
    get_integration,
    list_integrations,
    rotate_key,
    update_integration,
)
from incidents.alerts.models import (
    ALERT_EVENTS,
    AlertEvent,
    AlertStatus,
    IntegrationChanges,
    IntegrationWithKey,
    NewIntegration,
)
from incidents.errors import NotFoundError, UnauthorizedError
from incidents.incident.commands import load_summary, update_incident
from incidents.models import EventType, Severity, Status
from incidents.paging import PageRequest
from incidents.requests import CreateTeam, UpdateIncident
from incidents.store import Caller, Store, new_id
from incidents.team_commands import create_team
from incidents.timeline.queries import EventRequest, incident_timeline

pytestmark = pytest.mark.integration


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


@pytest.fixture
def integration(store: Store, alice: Caller) -> IntegrationWithKey:
    team = create_team(store, alice, CreateTeam(name="Payments"))
    return create_integration(store, alice, NewIntegration(name="prometheus", team_id=team.id))


def trigger(key: str | None = None, summary: str = "disk full", **payload: Any) -> AlertEvent:
    body = {"summary": summary, "source": "db-1", "severity": "critical", **payload}
    return ALERT_EVENTS.validate_python(
        {"event_action": "trigger", "payload": body, **({"dedup_key": key} if key else {})}
    )


def action(name: str, key: str, **payload: Any) -> AlertEvent:
    return ALERT_EVENTS.validate_python(
        {"event_action": name, "dedup_key": key, **({"payload": payload} if payload else {})}
    )


def send(store: Store, key: str, alert: AlertEvent) -> Any:
    caller, integration = authenticate(store, key)
    return ingest_alert(store, caller, integration, alert)


def events(store: Store, caller: Caller, incident_id: str) -> list[Any]:
    return incident_timeline(
        store, caller, incident_id, EventRequest(PageRequest(limit=100, descending=False))
    ).items


def test_an_integration_s_key_is_shown_once_stored_hashed_rotated_and_revoked(
    store: Store, alice: Caller, integration: IntegrationWithKey, dynamodb: Any
) -> None:
    caller, found = authenticate(store, integration.key)
    assert caller == Caller(alice.account_id, integration.id)
    assert found.last_used_at is None, "read before this use was marked"
    assert get_integration(store, alice, integration.id).last_used_at is not None
    assert [i.id for i in list_integrations(store, alice)] == [integration.id]
    items = dynamodb.scan(TableName=store.table_name)["Items"]
    assert integration.key not in repr(items), "the key itself is never stored"
    renamed = update_integration(
        store, alice, integration.id, IntegrationChanges(default_severity=Severity.SEV2)
    )
    assert (renamed.name, renamed.default_severity) == ("prometheus", Severity.SEV2)
    rotated = rotate_key(store, alice, integration.id)
    assert rotated.key != integration.key
    assert rotated.key_hint == rotated.key[-4:]
    with pytest.raises(UnauthorizedError):
        authenticate(store, integration.key)
    assert authenticate(store, rotated.key)[1].id == integration.id
    delete_integration(store, alice, integration.id)
    with pytest.raises(UnauthorizedError):
        authenticate(store, rotated.key)
    with pytest.raises(UnauthorizedError):
        authenticate(store, "ik_" + "x" * 43)
    with pytest.raises(NotFoundError):
        get_integration(store, alice, integration.id)


def test_an_integration_routes_only_to_a_team_of_its_account(store: Store, alice: Caller) -> None:
    with pytest.raises(NotFoundError, match="team"):
        create_integration(store, alice, NewIntegration(name="x", team_id=new_id("team")))
    assert list_integrations(store, alice) == []
    other = Caller(new_id("acct"), new_id("user"))
    team = create_team(store, other, CreateTeam(name="theirs"))
    with pytest.raises(NotFoundError, match="team"):
        create_integration(store, alice, NewIntegration(name="x", team_id=team.id))


def test_a_trigger_opens_one_incident_per_key_and_counts_every_alert(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    opened = send(store, integration.key, trigger("db-1/disk"))
    assert opened.status is AlertStatus.OPENED
    summary = load_summary(store, alice, opened.incident_id)
    assert (summary.title, summary.severity) == ("disk full", Severity.SEV1)
    assert summary.created_by == integration.id
    joined = send(store, integration.key, trigger("db-1/disk", "disk still full"))
    assert (joined.status, joined.incident_id) == (AlertStatus.ATTACHED, opened.incident_id)
    retried = send(store, integration.key, trigger("db-1/disk", "disk still full"))
    assert retried == joined, "the same body again is a retry: the first answer"
    assert alert_count(store, alice.account_id, opened.incident_id) == 2
    other = send(store, integration.key, trigger("db-2/disk"))
    assert other.incident_id != opened.incident_id
    generated = send(store, integration.key, trigger())
    assert generated.dedup_key.startswith("alert_"), "a key is generated and returned"


def test_acknowledge_and_resolve_move_the_key_s_incident_then_a_trigger_opens_a_new_one(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    first = send(store, integration.key, trigger("k"))
    acked = send(store, integration.key, action("acknowledge", "k"))
    assert (acked.status, acked.incident_id) == (AlertStatus.ACKNOWLEDGED, first.incident_id)
    assert load_summary(store, alice, first.incident_id).status is Status.ACKNOWLEDGED
    resolved = send(store, integration.key, action("resolve", "k"))
    assert resolved.status is AlertStatus.RESOLVED
    assert load_summary(store, alice, first.incident_id).status is Status.RESOLVED
    moves = [e for e in events(store, alice, first.incident_id) if e.seq > 1]
    assert [e.actor.user_id for e in moves] == [integration.id, integration.id]
    again = send(store, integration.key, trigger("k"))
    assert again.status is AlertStatus.OPENED
    assert again.incident_id != first.incident_id
    assert send(store, integration.key, action("acknowledge", "unknown")).incident_id is None


def test_an_acknowledge_older_than_the_key_s_incident_moves_nothing(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    now = datetime.now(UTC)
    opened = send(store, integration.key, trigger("late", timestamp=now.isoformat()))
    stale = send(
        store,
        integration.key,
        action("resolve", "late", timestamp=(now - timedelta(minutes=5)).isoformat()),
    )
    assert (stale.status, stale.incident_id) == (AlertStatus.IGNORED, None)
    assert load_summary(store, alice, opened.incident_id).status is Status.TRIGGERED


@pytest.fixture
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Racing alerts given the time they need: the function's 6 s budget is sized for
    DynamoDB, and DynamoDB Local on two busy cores serves a contended key far slower.
    What these tests check is what lands, not the budget (a 429 past it)."""
    monkeypatch.setattr(ingest, "ALERT_SECONDS", 120.0)


@pytest.mark.usefixtures("patient")
def test_racing_first_triggers_of_one_key_open_one_incident(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    def fire(n: int) -> Any:
        return send(store, integration.key, trigger("storm", custom_details={"n": n}))

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(fire, range(100)))
    incidents = {answer.incident_id for answer in answers}
    assert len(incidents) == 1, incidents
    assert sorted(a.status for a in answers).count(AlertStatus.OPENED) == 1
    assert alert_count(store, alice.account_id, incidents.pop()) == 100


def test_a_storm_notes_its_alerts_on_the_timeline_once_a_minute(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    now = [datetime(2026, 11, 26, 8, 0, tzinfo=UTC)]
    timed = dataclasses.replace(store, clock=lambda: now[0])
    opened = send(timed, integration.key, trigger("noisy"))
    for second in (10, 20, 70, 80, 140):
        now[0] = datetime(2026, 11, 26, 8, 0, tzinfo=UTC) + timedelta(seconds=second)
        send(timed, integration.key, trigger("noisy", f"noise at {second}"))
    received = [
        e for e in events(store, alice, opened.incident_id) if e.type is EventType.ALERT_RECEIVED
    ]
    assert [e.alert.alerts for e in received] == [1, 2, 2], "at once, then once a minute"
    assert [e.alert.summary for e in received] == ["noise at 10", "noise at 70", "noise at 140"]
    assert alert_count(store, alice.account_id, opened.incident_id) == 6


def test_a_trigger_without_summary_names_the_missing_fields() -> None:
    with pytest.raises(ValueError, match=r"trigger\.payload\.summary\n  Field required"):
        ALERT_EVENTS.validate_python({"event_action": "trigger", "payload": {"severity": "info"}})
    with pytest.raises(ValueError, match=r"resolve\.dedup_key\n  Field required"):
        ALERT_EVENTS.validate_python({"event_action": "resolve"})


ROUNDS, RACERS = 5, 24


@pytest.mark.usefixtures("patient")
def test_mixed_alerts_racing_on_one_key_all_land_and_count_exactly(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    """Triggers, acknowledges and resolves of one key, all at once, round after round: no
    alert answers anything but what it did (the Events API has no 409), every trigger is
    counted once on the incident it opened or joined, at most one incident of the key is
    open, and no incident is joined, or notes an alert, once it is resolved."""
    answers: list[Any] = []
    for round_number in range(ROUNDS):
        kinds = ["trigger"] * (RACERS // 2) + ["acknowledge", "resolve"] * (RACERS // 4)

        def fire(n: int, kinds: list[str] = kinds, round_number: int = round_number) -> Any:
            if kinds[n] == "trigger":
                alert = trigger("racing", custom_details={"round": round_number, "n": n})
                return send(store, integration.key, alert)
            return send(store, integration.key, action(kinds[n], "racing"))

        with ThreadPoolExecutor(RACERS) as pool:
            answers += list(pool.map(fire, range(RACERS)))  # raises on any 409
    triggered = [a for a in answers if a.status in (AlertStatus.OPENED, AlertStatus.ATTACHED)]
    assert len(triggered) == ROUNDS * RACERS // 2, "every trigger opened or joined"
    incidents = {a.incident_id for a in triggered}
    counted = sum(alert_count(store, alice.account_id, i) for i in incidents)
    assert counted == len(triggered), "each trigger counted once"
    opened = [i for i in incidents if load_summary(store, alice, i).status is not Status.RESOLVED]
    assert len(opened) <= 1, "at most one open incident of the key"
    for incident_id in incidents:
        kinds_seen = [e.type for e in events(store, alice, incident_id)]
        if EventType.RESOLVED in kinds_seen:
            after = kinds_seen[kinds_seen.index(EventType.RESOLVED) :]
            assert EventType.ALERT_RECEIVED not in after, "nothing joins a resolved incident"


class ActsFirst:
    """A store's client that runs `action` (another request racing this one) once, just
    before the first `operation` call that `when` picks."""

    def __init__(
        self,
        store: Store,
        operation: str,
        action: Callable[[], object],
        when: Callable[[dict[str, Any]], bool] = lambda _: True,
    ) -> None:
        self._client, self.exceptions = store.client, store.client.exceptions
        self._operation, self._action, self._when = operation, action, when
        self.acted = False

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._client, name)
        if name != self._operation:
            return call

        def first_acting(**request: Any) -> Any:
            if not self.acted and self._when(request):
                self.acted = True
                self._action()
            return call(**request)

        return first_acting


def test_an_integration_deleted_while_its_alert_is_read_is_a_401_not_a_500(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    racing = dataclasses.replace(
        store,
        client=ActsFirst(  # type: ignore[arg-type]
            store, "update_item", lambda: delete_integration(store, alice, integration.id)
        ),
    )
    with pytest.raises(UnauthorizedError, match="unknown or revoked"):
        authenticate(racing, integration.key)


def test_concurrent_changes_of_an_integration_keep_every_field_and_never_404(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    """A PATCH writes only what it names: two PATCHes of different fields and a rotation,
    racing round after round, leave both fields changed and the rotated key working."""
    severities = [Severity.SEV1, Severity.SEV2]
    for round_number in range(8):
        name = f"prometheus {round_number}"
        severity = severities[round_number % 2]
        with ThreadPoolExecutor(3) as pool:
            renamed = pool.submit(
                update_integration, store, alice, integration.id, IntegrationChanges(name=name)
            )
            reseverity = pool.submit(
                update_integration, store, alice, integration.id,
                IntegrationChanges(default_severity=severity),
            )  # fmt: skip
            rotated = pool.submit(rotate_key, store, alice, integration.id)
            renamed.result(), reseverity.result()  # no 404
            key = rotated.result().key
        now = get_integration(store, alice, integration.id)
        assert (now.name, now.default_severity) == (name, severity), "no field lost"
        assert authenticate(store, key)[1].id == integration.id


def test_concurrent_rotations_all_succeed_and_the_last_answered_key_works(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    """Ten rotations at once each answer a key, as if one after another: none is a 404 for
    a key another replaced, and exactly one of the ten keys works."""
    with ThreadPoolExecutor(10) as pool:
        keys = list(pool.map(lambda _: rotate_key(store, alice, integration.id).key, range(10)))
    working = []
    for key in [integration.key, *keys]:
        try:
            working.append(authenticate(store, key)[1].id)
        except UnauthorizedError:
            continue
    assert working == [integration.id], "one key works: the last rotation's"


def test_a_trigger_that_loses_to_a_resolve_opens_the_key_s_next_incident(
    store: Store, alice: Caller, integration: IntegrationWithKey
) -> None:
    first = send(store, integration.key, trigger("flap"))
    racing = ActsFirst(
        store,
        "transact_write_items",
        lambda: update_incident(
            store, alice, first.incident_id, UpdateIncident(status=Status.RESOLVED)
        ),
        when=lambda request: any("ConditionCheck" in op for op in request["TransactItems"]),
    )
    late = send(
        dataclasses.replace(store, client=racing),  # type: ignore[arg-type]
        integration.key,
        trigger("flap", "again"),
    )
    assert racing.acted, "the resolve landed between the trigger's read and its join"
    assert late.status is AlertStatus.OPENED, "not attached to the resolved incident"
    assert late.incident_id != first.incident_id
    assert alert_count(store, alice.account_id, first.incident_id) == 1
    kinds = [e.type for e in events(store, alice, first.incident_id)]
    assert kinds[-1] is EventType.RESOLVED, "nothing after the resolve"
