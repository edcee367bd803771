"""Lifecycle timers of the incidents integrations open (PagerDuty's names): an incident with
no new alert for its integration's ``auto_resolve_timeout`` resolves. Fired by the sweep
(`incidents.timers.sweep`), in one transaction with the timer's claim."""

from __future__ import annotations

from incidents.incident.commands import load_summary, update_incident
from incidents.models import Status
from incidents.requests import UpdateIncident
from incidents.store import Caller, Store
from incidents.timers.schedule import Timer, TimerMovedError, claim

TIMERS = "timers"
"""Who reads an incident for its timer (a read names no actor; the resolve is the
integration's that opened it)."""


def auto_resolve(store: Store, timer: Timer) -> bool:
    """Resolve the timer's incident, as the integration that opened it, with the claim; an
    incident resolved meanwhile (by a person or an alert) only loses its timer. False if
    the claim failed (an alert moved it on since the sweep read it)."""
    moved = TimerMovedError("the incident's auto-resolve moved")
    summary = load_summary(store, Caller(timer.account, TIMERS), timer.subject)
    try:  # an incident resolved already changes nothing: the claim goes alone
        update_incident(
            store,
            Caller(timer.account, summary.created_by),
            timer.subject,
            UpdateIncident(status=Status.RESOLVED),
            also=[(claim(store, timer), moved)],
        )
    except TimerMovedError:
        return False
    return True
