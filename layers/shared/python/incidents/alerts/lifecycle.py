"""Lifecycle timers of the incidents integrations open (PagerDuty's names): an incident with
no new alert for its integration's ``auto_resolve_timeout`` resolves; one acknowledged and
not resolved within its ``acknowledgement_timeout`` returns to triggered. Fired by the sweep
(`incidents.timers.sweep`), each in one transaction with the timer's claim, acting as the
integration that opened the incident, the timer named on the change's event."""

from __future__ import annotations

from incidents.errors import PreconditionFailedError, VersionConflictError
from incidents.incident.commands import CHANGE_ATTEMPTS, load_summary, update_incident
from incidents.models import Status, Timeout
from incidents.requests import UpdateIncident
from incidents.store import Caller, Store, labelled
from incidents.timers.schedule import Timer, TimerMovedError, claim

TIMERS = "timers"
"""Who reads an incident for its timer (a read names no actor; the change is the
integration's that opened it)."""


def auto_resolve(store: Store, timer: Timer) -> bool:
    """Resolve the timer's incident, with the claim; an incident resolved meanwhile (by a
    person or an alert) only loses its timer. False if the claim failed (an alert moved it
    on since the sweep read it)."""
    summary = load_summary(store, Caller(timer.account, TIMERS), timer.subject)
    return _fire(store, timer, summary.created_by, Status.RESOLVED, Timeout.AUTO_RESOLVE)


def acknowledgement_timeout(store: Store, timer: Timer) -> bool:
    """Return the timer's incident to triggered if it is still acknowledged, with the
    claim, on the version read (an incident resolved or triggered meanwhile is read again:
    a timer never reopens one); one no longer acknowledged only loses its timer."""
    for _ in range(CHANGE_ATTEMPTS):
        summary = load_summary(store, Caller(timer.account, TIMERS), timer.subject)
        acknowledged = summary.status is Status.ACKNOWLEDGED  # if not, the claim goes alone
        status = Status.TRIGGERED if acknowledged else summary.status
        try:
            return _fire(
                store, timer, summary.created_by, status, Timeout.ACKNOWLEDGEMENT, summary.version
            )
        except PreconditionFailedError:
            continue  # changed since it was read
    raise VersionConflictError("the incident keeps changing; the next sweep tries again")


def _fire(  # noqa: PLR0917 (each handler names every one)
    store: Store,
    timer: Timer,
    opener: str,
    status: Status,
    timeout: Timeout,
    if_match: int | None = None,
) -> bool:
    """Move the incident to `status` as its `opener` (if it is there: only the claim), on
    version `if_match` if given; False if the claim failed."""
    moved = TimerMovedError(f"the incident's {timeout.value} moved")
    try:
        update_incident(
            store,
            Caller(timer.account, opener),
            timer.subject,
            UpdateIncident(status=status),
            if_match,
            also=[labelled(claim(store, timer), moved)],
            timeout=timeout,
        )
    except TimerMovedError:
        return False
    return True
