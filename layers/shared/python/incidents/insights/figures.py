"""What an incident's timeline says for insights, one event at a time.

An incident's life is folded over its events in ``seq`` order. Each figure is filed under
the UTC day the incident was created, and under the severity and teams the incident has
when the figure is taken (PagerDuty's analytics file incidents by their creation day too):

- ``opened``: its ``incident.created`` event;
- ``acknowledged``: its first move to ACKNOWLEDGED, with the seconds since it was created
  (PagerDuty's ``seconds_to_first_ack``); a later acknowledge adds nothing;
- ``resolved``: its first resolve, with the seconds since it was created
  (``seconds_to_resolve``), and whether it was never acknowledged or was resolved by its
  integration's ``auto_resolve_timeout``; a resolve after a reopen adds nothing;
- ``reopened``: its first move from RESOLVED back to open.

An incident created acknowledged or resolved (a status given at creation) takes that
figure at 0 seconds. An incident created before the timeline existed (its ``incident.created``
event written by its first change, from its summary as it was then) counts as opened only:
when it was acknowledged or resolved is not known.

Teams are those the timeline names: the teams among the ``incident.created`` event's
participants (it lists 20, the creator and assignees first) and those added later.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from incidents.models import (
    EventType,
    IncidentChanged,
    IncidentCreated,
    ParticipantChanged,
    Role,
    Severity,
    Status,
    TimelineEvent,
    Timeout,
    parse_timestamp,
)

MAX_TEAMS = 20
"""Teams an incident's figures are filed under at most (its first 20 teams; the
``incident.created`` event lists 20 participants): a figure then writes at most 21
aggregates, the account's and its teams', in one transaction."""


class Measure(StrEnum):
    """What a figure counts."""

    OPENED = "opened"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    REOPENED = "reopened"


class Life(BaseModel):
    """What the folding keeps of an incident between its events."""

    model_config = ConfigDict(frozen=True)

    created_at: str
    severity: Severity
    teams: tuple[str, ...] = ()
    acknowledged: bool = False
    resolved: bool = False
    reopened: bool = False

    @property
    def day(self) -> str:
        """The UTC day the incident was created (``YYYY-MM-DD``)."""
        return parse_timestamp(self.created_at).date().isoformat()

    def seconds_until(self, at: str) -> float:
        """Seconds from the incident's creation to `at` (never negative)."""
        elapsed = parse_timestamp(at) - parse_timestamp(self.created_at)
        return max(0.0, elapsed.total_seconds())


@dataclass(frozen=True)
class Figure:
    """One figure of one incident, and where it is filed."""

    measure: Measure
    incident_id: str
    day: str
    severity: Severity
    teams: tuple[str, ...]
    seconds: float | None = None
    unacknowledged: bool = False
    """Resolved without ever being acknowledged."""
    auto_resolved: bool = False
    """Resolved by its integration's ``auto_resolve_timeout``."""


def follow(life: Life | None, event: TimelineEvent) -> tuple[Life | None, list[Figure]]:
    """The life after `event`, and the figures the event makes (None before the
    ``incident.created`` event: nothing is known of the incident yet)."""
    if isinstance(event, IncidentCreated):
        return _created(event)
    if life is None:
        return None, []
    if isinstance(event, ParticipantChanged) and event.participant.role is Role.TEAM:
        return _teams_changed(life, event), []
    if isinstance(event, IncidentChanged):
        return _changed(life, event)
    return life, []


def _created(event: IncidentCreated) -> tuple[Life, list[Figure]]:
    first = event.incident
    teams = [p.participant_id for p in event.participants if p.role is Role.TEAM]
    life = Life(
        created_at=first.created_at,
        severity=first.severity,
        teams=tuple(dict.fromkeys(teams))[:MAX_TEAMS],
    )
    opened = _figure(life, Measure.OPENED, event.incident_id)
    if event.backfilled:  # its status is the first change's, not its first: no time known
        return _known(life, first.status), [opened]
    if first.status is Status.TRIGGERED:
        return life, [opened]
    life, figures = _status_changed(life, event.incident_id, Status.TRIGGERED, first.status, 0.0)
    return life, [opened, *figures]


def _known(life: Life, status: Status) -> Life:
    """The life of an incident seen first at `status`: what it has been through is no
    figure of its own (a later first acknowledge or resolve is not a first)."""
    resolved = status is Status.RESOLVED
    return life.model_copy(
        update={"acknowledged": resolved or status is Status.ACKNOWLEDGED, "resolved": resolved}
    )


def _teams_changed(life: Life, event: ParticipantChanged) -> Life:
    team = event.participant.participant_id
    teams = [t for t in life.teams if t != team]
    if event.type is EventType.PARTICIPANT_ADDED:
        teams.append(team)
    return life.model_copy(update={"teams": tuple(teams)[:MAX_TEAMS]})


def _changed(life: Life, event: IncidentChanged) -> tuple[Life, list[Figure]]:
    changes = event.changes
    if changes.severity is not None:
        life = life.model_copy(update={"severity": changes.severity.to})
    if changes.status is None:
        return life, []
    seconds = life.seconds_until(event.at)
    status, was = changes.status.to, changes.status.from_
    auto = event.timeout is Timeout.AUTO_RESOLVE
    return _status_changed(life, event.incident_id, was, status, seconds, auto_resolved=auto)


def _status_changed(
    life: Life,
    incident: str,
    was: Status,
    status: Status,
    seconds: float,
    *,
    auto_resolved: bool = False,
) -> tuple[Life, list[Figure]]:
    figures: list[Figure] = []
    if was is Status.RESOLVED and status is not Status.RESOLVED and not life.reopened:
        figures.append(_figure(life, Measure.REOPENED, incident))
        life = life.model_copy(update={"reopened": True})
    if status is Status.ACKNOWLEDGED and not life.acknowledged:
        figures.append(_figure(life, Measure.ACKNOWLEDGED, incident, seconds=seconds))
        life = life.model_copy(update={"acknowledged": True})
    if status is Status.RESOLVED and not life.resolved:
        resolved = _figure(
            life,
            Measure.RESOLVED,
            incident,
            seconds=seconds,
            unacknowledged=not life.acknowledged,
            auto_resolved=auto_resolved,
        )
        figures.append(resolved)
        life = life.model_copy(update={"resolved": True})
    return life, figures


def _figure(
    life: Life,
    measure: Measure,
    incident_id: str,
    *,
    seconds: float | None = None,
    unacknowledged: bool = False,
    auto_resolved: bool = False,
) -> Figure:
    return Figure(
        measure=measure,
        incident_id=incident_id,
        day=life.day,
        severity=life.severity,
        teams=life.teams,
        seconds=seconds,
        unacknowledged=unacknowledged,
        auto_resolved=auto_resolved,
    )
