"""An incident escalated or reassigned by hand (PagerDuty's ``escalation_level`` and a
reassignment to an escalation policy): its escalation starts over at that level of the
policy it keeps, or at level 1 of another policy, due at once (the next sweep pages). An
acknowledged incident is triggered again in the same transaction: the people now paged
must acknowledge it themselves. A resolved incident escalates no more (reopen it first)."""

from __future__ import annotations

from functools import partial

from dynashard.resharding import Transaction
from incidents.errors import (
    ConflictError,
    InvalidFilterError,
    NotFoundError,
    VersionConflictError,
)
from incidents.escalation.engine import Restart, kept_policy, restart_operations
from incidents.escalation.models import EscalateIncident, ReassignIncident
from incidents.escalation.policies import find_policy
from incidents.incident.commands import CHANGE_ATTEMPTS, load_summary, update_incident
from incidents.models import IncidentSummary, Status
from incidents.requests import UpdateIncident
from incidents.store import Caller, Failure, Store
from incidents.timeline.events import pause_before_retry


class NotEscalatingError(ConflictError):
    """An incident with no escalation (opened without a policy), or one resolved."""


def escalate_incident(
    store: Store, caller: Caller, incident_id: str, request: EscalateIncident
) -> IncidentSummary:
    """The incident's escalation at `request`'s level of the policy it keeps."""
    policy = kept_policy(store, caller.account_id, incident_id)
    if policy is None:
        load_summary(store, caller, incident_id)  # 404 for an incident not the caller's
        raise NotEscalatingError("the incident has no escalation policy: reassign it to one first")
    levels = len(policy.escalation_rules)
    if request.escalation_level > levels:
        raise InvalidFilterError(
            f"escalation_level: the incident's policy has {levels} level(s), not "
            f"{request.escalation_level}"
        )
    return _restart(store, caller, incident_id, Restart(level=request.escalation_level))


def reassign_incident(
    store: Store, caller: Caller, incident_id: str, request: ReassignIncident
) -> IncidentSummary:
    """The incident's escalation by another policy (a copy of it as it is now), level 1."""
    policy = find_policy(store, caller.account_id, request.escalation_policy_id)
    if policy is None:
        raise NotFoundError(f"escalation policy {request.escalation_policy_id} not found")
    return _restart(store, caller, incident_id, Restart(policy=policy))


def _restart(store: Store, caller: Caller, incident_id: str, restart: Restart) -> IncidentSummary:
    """`restart` written: with the incident triggered again if it was acknowledged."""
    for attempt in range(CHANGE_ATTEMPTS):
        summary = load_summary(store, caller, incident_id)
        if summary.status is Status.RESOLVED:
            raise NotEscalatingError("a resolved incident escalates no more: reopen it first")
        if summary.status is Status.ACKNOWLEDGED:
            triggered = UpdateIncident(status=Status.TRIGGERED)
            return update_incident(store, caller, incident_id, triggered, restart=restart)
        try:
            built = partial(_restarted, store, caller.account_id, incident_id, restart)
            store.transact_growing(built)
        except VersionConflictError:
            pause_before_retry(attempt)
            continue
        return summary
    raise VersionConflictError("the incident's escalation keeps changing; retry")


def _restarted(
    store: Store, account: str, incident_id: str, restart: Restart
) -> Transaction[Failure, None]:
    """The restart's transaction, from the escalation as it is now (built again when a
    key's count grows)."""
    return Transaction(restart_operations(store, account, incident_id, restart), None)
