"""The acknowledgement timer a status change sets or clears (PagerDuty's
``acknowledgement_timeout``): an incident an integration opened, once acknowledged, returns
to triggered if it is not resolved within its integration's timeout.

The timeout is the integration's when the incident is acknowledged (one point read of the
integration, on that change only); the timer is set in the acknowledge's transaction and
cleared in the resolve's, so it is never left behind by either. An incident returned to
triggered by a person keeps its timer: when it fires, the sweep finds the incident not
acknowledged and only claims it (`incidents.alerts.lifecycle`).
"""

from __future__ import annotations

from datetime import timedelta

from dynashard.resharding import Operation
from incidents.alerts.integrations import find_integration, is_integration
from incidents.models import IncidentSummary, Status
from incidents.store import Failure, Store, labelled
from incidents.timers.schedule import Timer, TimerKind, clear_timer, set_timer

MOVED = (Status.ACKNOWLEDGED, Status.RESOLVED)
"""The statuses whose arrival sets (acknowledged) or clears (resolved) the timer."""


def acknowledgement_timeout(
    store: Store, account: str, before: IncidentSummary, after: IncidentSummary
) -> int | None:
    """The timeout that applies to this change: the opening integration's, read only when
    the change acknowledges or resolves an incident an integration opened."""
    if after.status is before.status or after.status not in MOVED:
        return None
    if not is_integration(before.created_by):
        return None
    integration = find_integration(store, account, before.created_by)
    return None if integration is None else integration.acknowledgement_timeout


def acknowledgement_timers(
    store: Store, account: str, timeout: int | None, after: IncidentSummary
) -> list[Operation[Failure]]:
    """The write that goes with the change: set the timer (acknowledged) or clear it
    (resolved); none without a timeout."""
    if timeout is None:
        return []
    if after.status is Status.ACKNOWLEDGED:
        due = store.clock() + timedelta(seconds=timeout)
        return [set_timer(store, Timer(account, TimerKind.ACKNOWLEDGEMENT, after.id, due))]
    return [labelled(clear_timer(store, account, TimerKind.ACKNOWLEDGEMENT, after.id))]
