"""An incident escalated or reassigned by hand (PagerDuty's ``escalation_level`` and a
reassignment to an escalation policy): its escalation starts over at that level of the
policy it keeps, or at level 1 of another policy, due at once (the next sweep pages).

A triggered incident gets an ``incident.escalated`` event naming who did it, in the
transaction that starts the escalation over, on the summary as read (an acknowledge or a
resolve racing it wins, and the escalate is tried again from there). An acknowledged
incident is triggered again in its status change's transaction (its event names the
person): the people now paged must acknowledge it themselves. A resolved incident
escalates no more (reopen it first)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from dynashard.query import Item
from dynashard.resharding import Transaction
from incidents.errors import ConflictError, DomainError, NotFoundError, VersionConflictError
from incidents.escalation.engine import Restart, kept_policy, restart_operations
from incidents.escalation.models import EscalateIncident, EscalationPolicy, ReassignIncident
from incidents.escalation.policies import find_policy
from incidents.incident.commands import CHANGE_ATTEMPTS, update_incident
from incidents.models import EventType, IncidentSummary, ManualEscalation, Status
from incidents.requests import UpdateIncident
from incidents.store import Caller, Failure, Store, labelled
from incidents.timeline.events import change_operations, pause_before_retry, require_counted

Chosen = Callable[[EscalationPolicy | None], Restart]
"""Where the escalation starts over, given the policy the incident keeps (None: none)."""


class NotEscalatingError(ConflictError):
    """An incident with no escalation (opened without a policy), or one resolved."""


class LevelOutOfRangeError(DomainError):
    """A level the incident's policy does not have."""

    code = "validation_error"


def escalate_incident(
    store: Store, caller: Caller, incident_id: str, request: EscalateIncident
) -> IncidentSummary:
    """The incident's escalation at `request`'s level of the policy it keeps."""
    return _restart(store, caller, incident_id, partial(_at_level, request.escalation_level))


def reassign_incident(
    store: Store, caller: Caller, incident_id: str, request: ReassignIncident
) -> IncidentSummary:
    """The incident's escalation by another policy (a copy of it as it is now), level 1."""
    policy = find_policy(store, caller.account_id, request.escalation_policy_id)
    if policy is None:
        raise NotFoundError(f"escalation policy {request.escalation_policy_id} not found")
    return _restart(store, caller, incident_id, lambda _: Restart(policy=policy))


def _at_level(level: int, kept: EscalationPolicy | None) -> Restart:
    """A restart at `level` of the `kept` policy, checked against it."""
    if kept is None:
        raise NotEscalatingError("the incident has no escalation policy: reassign it to one first")
    levels = len(kept.escalation_rules)
    if level > levels:
        raise LevelOutOfRangeError(
            f"escalation_level: the incident's policy has {levels} level(s), not {level}"
        )
    return Restart(level=level)


def _restart(store: Store, caller: Caller, incident_id: str, chosen: Chosen) -> IncidentSummary:
    """The restart `chosen` from the escalation as read, with its event, or with the
    incident triggered again if it was acknowledged."""
    account = caller.account_id
    for attempt in range(CHANGE_ATTEMPTS):
        counted = require_counted(store, caller, incident_id)
        if counted.summary.status is Status.RESOLVED:
            raise NotEscalatingError("a resolved incident escalates no more: reopen it first")
        kept = kept_policy(store, account, incident_id)
        restart = chosen(kept)
        if counted.summary.status is Status.ACKNOWLEDGED:
            triggered = UpdateIncident(status=Status.TRIGGERED)
            return update_incident(store, caller, incident_id, triggered, restart=restart)
        policy = restart.policy or kept
        assert policy is not None, "a restart names a policy, or the incident keeps one"
        escalated = ManualEscalation(
            policy_id=policy.id,
            policy_version=policy.version,
            level=restart.level,
            reassigned=restart.policy is not None,
        )
        written, _ = change_operations(
            store, caller, counted, EventType.ESCALATED, escalation=escalated
        )
        try:
            built = partial(_restarted, store, account, incident_id, restart, written)
            store.transact_growing(built)
        except VersionConflictError:
            pause_before_retry(attempt)
            continue
        return counted.summary
    raise VersionConflictError("the incident's escalation keeps changing; retry")


def _restarted(
    store: Store, account: str, incident_id: str, restart: Restart, written: Sequence[Item]
) -> Transaction[Failure, None]:
    """The restart's transaction, from the escalation as it is now (built again when a
    key's count grows), with the event's writes."""
    restarted = restart_operations(store, account, incident_id, restart)
    return Transaction([*map(labelled, written), *restarted], None)
