"""The acknowledgement timer a status change sets or clears (PagerDuty's
``acknowledgement_timeout``): an incident an integration opened, once acknowledged, returns
to triggered if it is not resolved within its integration's timeout.

The timeout is the integration's when the incident is acknowledged (one point read of the
integration, on that change only); the timer is set in the acknowledge's transaction and
cleared in every resolve's of an incident an integration opened (whatever its timeout is
by then: the delete of a timer that is not there costs a write unit and nothing else). An
incident returned to triggered by a person keeps its timer: when it fires, the sweep
finds the incident not acknowledged and only claims it (`incidents.alerts.lifecycle`).
"""

from __future__ import annotations

from datetime import timedelta

from dynashard.resharding import Operation
from incidents.items import deserialize
from incidents.keys import integrations_partition
from incidents.models import IncidentSummary, Status, is_integration
from incidents.store import Failure, Store, labelled
from incidents.timers.schedule import Timer, TimerKind, clear_timer, set_timer


def acknowledgement_timeout(
    store: Store, account: str, before: IncidentSummary, after: IncidentSummary
) -> int | None:
    """The timeout that applies to this change: the opening integration's (its one attribute,
    from its item: the incident does not depend on the alerts that manage integrations),
    read only when the change acknowledges an incident an integration opened."""
    if before.status is Status.ACKNOWLEDGED or after.status is not Status.ACKNOWLEDGED:
        return None
    if not is_integration(before.created_by):
        return None
    item = store.get(integrations_partition(account), before.created_by)
    seconds = None if item is None else deserialize(item).get("acknowledgement_timeout")
    return None if seconds is None else int(seconds)


def acknowledgement_timers(
    store: Store, account: str, timeout: int | None, before: IncidentSummary,
    after: IncidentSummary,
) -> list[Operation[Failure]]:  # fmt: skip
    """The write that goes with the change: set the timer (acknowledged, with a timeout)
    or clear it (resolved, if an integration opened the incident)."""
    if timeout is not None and after.status is Status.ACKNOWLEDGED:
        due = store.clock() + timedelta(seconds=timeout)
        return [set_timer(store, Timer(account, TimerKind.ACKNOWLEDGEMENT, after.id, due))]
    resolves = before.status is not Status.RESOLVED and after.status is Status.RESOLVED
    if resolves and is_integration(after.created_by):
        return [labelled(clear_timer(store, account, TimerKind.ACKNOWLEDGEMENT, after.id))]
    return []
