"""What each timeline event counts for insights, event by event (`incidents.insights.figures`):
the cases the API-driven property test does not reach. An incident created before the
timeline counts as opened only; a resolve by the auto-resolve timer is marked so; an
incident's teams stop at 20."""

from __future__ import annotations

from typing import Any

from incidents.insights.figures import MAX_TEAMS, Measure, follow
from incidents.models import EVENTS, Severity, Status, TimelineEvent
from incidents.store import new_id

INCIDENT = new_id("inc")
CREATED_AT = "2027-03-01T10:00:00Z"


def summary(status: Status) -> dict[str, Any]:
    return {
        "id": INCIDENT, "number": 1, "title": "db down", "status": status.value,
        "severity": Severity.SEV2.value, "created_by": new_id("user"),
        "created_at": CREATED_AT, "updated_at": CREATED_AT, "version": 1,
    }  # fmt: skip


def event(seq: int, at: str, **fields: Any) -> TimelineEvent:
    base = {"id": new_id("evt"), "incident_id": INCIDENT, "seq": seq, "at": at,
            "actor": {"user_id": new_id("user")}, "version": seq}  # fmt: skip
    return EVENTS.validate_python({**base, **fields})


def created(status: Status, *, backfilled: bool, teams: int = 0) -> TimelineEvent:
    participants = [{"participant_id": new_id("team"), "role": "team"} for _ in range(teams)]
    return event(
        1, CREATED_AT, type="incident.created", incident=summary(status),
        participants=participants, backfilled=backfilled,
    )  # fmt: skip


def resolved(seq: int, was: Status, *, timeout: str | None = None) -> TimelineEvent:
    change = {"status": {"from": was.value, "to": Status.RESOLVED.value}}
    return event(
        seq, "2027-03-01T10:10:00Z", type="incident.resolved", changes=change, timeout=timeout
    )


def test_an_incident_from_before_the_timeline_counts_as_opened_only() -> None:
    life, figures = follow(None, created(Status.RESOLVED, backfilled=True))
    assert [f.measure for f in figures] == [Measure.OPENED]
    assert life is not None
    reopened = event(
        2, "2027-03-02T00:00:00Z", type="incident.reopened",
        changes={"status": {"from": "RESOLVED", "to": "ACKNOWLEDGED"}},
    )  # fmt: skip
    _, later = follow(life, reopened)
    assert [f.measure for f in later] == [Measure.REOPENED]  # not a first acknowledge


def test_a_status_given_at_creation_counts_at_zero_seconds() -> None:
    _, figures = follow(None, created(Status.RESOLVED, backfilled=False))
    assert [(f.measure, f.seconds) for f in figures] == [
        (Measure.OPENED, None),
        (Measure.RESOLVED, 0.0),
    ]
    assert figures[1].unacknowledged


def test_a_resolve_by_the_auto_resolve_timer_is_marked() -> None:
    life, _ = follow(None, created(Status.TRIGGERED, backfilled=False))
    _, figures = follow(life, resolved(2, Status.TRIGGERED, timeout="auto_resolve_timeout"))
    (figure,) = figures
    assert (figure.measure, figure.seconds, figure.auto_resolved) == (
        Measure.RESOLVED,
        600.0,
        True,
    )


def test_an_incidents_teams_stop_at_the_cap() -> None:
    life, _ = follow(None, created(Status.TRIGGERED, backfilled=False, teams=MAX_TEAMS))
    joined = event(
        2, "2027-03-01T10:01:00Z", type="participant.added",
        participant={"participant_id": new_id("team"), "role": "team"},
    )  # fmt: skip
    life, _ = follow(life, joined)
    assert life is not None
    assert len(life.teams) == MAX_TEAMS
    _, (figure,) = follow(life, resolved(3, Status.TRIGGERED))
    assert len(figure.teams) == MAX_TEAMS
