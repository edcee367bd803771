"""An incident's escalation (PagerDuty's): level 1 is paged as soon as the incident
triggers; while it stays triggered, each level waits its delay and the next is paged; after
the last level the policy starts over, ``num_loops`` times, then stays at its last level.
An acknowledge or a resolve stops it; the incident triggered again (an acknowledgement
timeout, a person) starts it over from level 1.

The policy is copied into the incident when escalation starts (Grafana OnCall's rule), so
an edit of the policy meanwhile changes nothing for it: the copy names its version. The
state is one item beside the incident's details; one timer (`TimerKind.ESCALATION`) is due
when something is, and its firing pages the level in the transaction of its claim, each
page a conditional Put keyed by (generation, loop, level, user): a repeated firing, a
redelivered message or two racing workers never page twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from dynashard.query import Item
from dynashard.resharding import Operation, Transaction
from incidents.contacts.models import Urgency
from incidents.errors import DomainError
from incidents.escalation.models import (
    AssignmentStrategy,
    EscalationPolicy,
    EscalationRule,
    TargetType,
)
from incidents.escalation.policies import find_policy
from incidents.items import deserialize, serialize
from incidents.keys import PAGE_PREFIX, PAGE_TYPE, escalation_key, page_sort_key
from incidents.models import IncidentSummary, Status, parse_timestamp, timestamp
from incidents.schedules.oncalls import schedule_on_call
from incidents.store import Failure, Store, labelled
from incidents.summaries import read_summary
from incidents.table import PK, SK
from incidents.timers.schedule import (
    Timer,
    TimerKind,
    TimerMovedError,
    claim,
    claim_alone,
    clear_timer,
    refire,
    set_timer,
)

logger = logging.getLogger(__name__)
ROUND_ROBIN_SORT_KEY = "round_robin"
Starts = Callable[[str], list[Operation[Failure]]]
"""The writes that start a new incident's escalation, given its id."""


class EscalationMovedError(DomainError):
    """The escalation changed since the firing read it (a restart): the timer was moved
    too, and the next firing goes on from the new state."""


@dataclass(frozen=True)
class Escalation:
    """Where an incident's escalation is: level (1-based) of loop (0-based), of its
    `generation` (each start over is one), whether that level was paged, and when it
    gives way to the next."""

    policy: EscalationPolicy
    generation: int = 1
    loop: int = 0
    level: int = 1
    paged: bool = False
    next_at: str | None = None
    stopped: bool = False
    """Past the last level of the last loop: nothing more is due."""
    revision: int = 1
    """Moved by every write, which is conditioned on the one read."""
    urgency: Urgency = Urgency.HIGH
    """The incident's (its integration's rule when it opened): which notification rules
    its pages apply."""

    @property
    def rule(self) -> EscalationRule:
        """The level's rule."""
        return self.policy.escalation_rules[self.level - 1]

    def advanced(self) -> Escalation:
        """The next level (or loop), or stopped at the last level of the last loop."""
        if self.level < len(self.policy.escalation_rules):
            return replace(self, level=self.level + 1, paged=False, next_at=None)
        if self.loop < self.policy.num_loops:
            return replace(self, loop=self.loop + 1, level=1, paged=False, next_at=None)
        return replace(self, stopped=True, next_at=None)


@dataclass(frozen=True)
class Page:
    """A user paged at a level, and what chose them (a schedule and its version, or the
    policy naming them)."""

    user_id: str
    schedule_id: str | None = None
    schedule_version: int | None = None


def start_operations(
    store: Store, account: str, incident_id: str, policy: EscalationPolicy, urgency: Urgency
) -> list[Operation[Failure]]:
    """The writes that start an incident's escalation, for its create's transaction: the
    state at level 1 (not yet paged) and its timer, due now."""
    state = Escalation(policy, urgency=urgency)
    timer = Timer(account, TimerKind.ESCALATION, incident_id, store.clock())
    return [labelled(store.put_operation(_item(account, incident_id, state), new=True)),
            set_timer(store, timer)]  # fmt: skip


def escalation_for(
    store: Store, account: str, policy_id: str | None, urgency: Urgency = Urgency.HIGH
) -> Starts:
    """What starts an incident's escalation by `policy_id` (read now: the copy it keeps) at
    `urgency`, for the transaction that opens it; nothing without a policy (or one deleted
    since)."""
    policy = None if policy_id is None else find_policy(store, account, policy_id)

    def starts(incident_id: str) -> list[Operation[Failure]]:
        if policy is None:
            return []
        return start_operations(store, account, incident_id, policy, urgency)

    return starts


@dataclass(frozen=True)
class Restart:
    """Where an escalation starts over: a level of the policy it keeps, or level 1 of
    another policy (a reassignment)."""

    level: int = 1
    policy: EscalationPolicy | None = None
    """None: the copy the incident keeps."""


def status_operations(
    store: Store,
    account: str,
    before: IncidentSummary,
    after: IncidentSummary,
    restart: Restart | None = None,
) -> list[Operation[Failure]]:
    """The writes that go with a status change: an acknowledge or a resolve stops the
    escalation (its timer cleared); triggered again, an incident that escalated starts over
    from level 1 (one read of its state, on that change only), or as `restart` says (an
    escalation by hand)."""
    if before.status is Status.TRIGGERED and after.status is not Status.TRIGGERED:
        return [labelled(clear_timer(store, account, TimerKind.ESCALATION, after.id))]
    if before.status is Status.TRIGGERED or after.status is not Status.TRIGGERED:
        return []
    return restart_operations(store, account, after.id, restart or Restart())


def restart_operations(
    store: Store, account: str, incident_id: str, restart: Restart
) -> list[Operation[Failure]]:
    """The writes that start the incident's escalation over as `restart` says, its timer
    due now (the next sweep pages); conditioned on the state read (a race is a conflict).
    An incident that never escalated starts only with another policy (its first)."""
    state = _read(store, account, incident_id)
    if state is None:
        if restart.policy is None:
            return []
        return start_operations(store, account, incident_id, restart.policy, Urgency.HIGH)
    again = Escalation(
        restart.policy or state.policy, state.generation + 1, level=restart.level,
        revision=state.revision + 1, urgency=state.urgency,
    )  # fmt: skip
    timer = Timer(account, TimerKind.ESCALATION, incident_id, store.clock())
    put = _conditioned(store, account, incident_id, again, state.revision)
    return [labelled(put), set_timer(store, timer)]


def kept_policy(store: Store, account: str, incident_id: str) -> EscalationPolicy | None:
    """The policy copy the incident's escalation keeps (None: it never escalated)."""
    state = _read(store, account, incident_id)
    return None if state is None else state.policy


def fire_escalation(store: Store, timer: Timer) -> bool:
    """Page what is due of the timer's incident, in one transaction with its claim (or its
    move to when the next thing is due); False if the claim failed."""
    account, incident_id = timer.account, timer.subject
    state = _read(store, account, incident_id)
    if state is None or state.stopped or not _triggered(store, account, incident_id):
        return claim_alone(store, timer)
    now = store.clock()
    if state.paged and state.next_at is not None and parse_timestamp(state.next_at) <= now:
        state = state.advanced()
    pages: list[Page] = []
    if not state.stopped and not state.paged:
        pages = _targets(store, account, state)
        if not pages:  # every schedule of the level has a gap now, or is gone
            logger.warning("an escalation level found nobody to page",
                           extra={"account": account, "incident_id": incident_id,
                                  "level": state.level, "policy_id": state.policy.id})  # fmt: skip
        delay = timedelta(minutes=state.rule.escalation_delay_in_minutes)
        state = replace(state, paged=True, next_at=timestamp(now + delay))
    written = replace(state, revision=state.revision + 1)
    moved = TimerMovedError("the escalation's timer moved")
    head = (
        labelled(claim(store, timer), moved)
        if state.stopped or state.next_at is None
        else refire(store, timer, parse_timestamp(state.next_at), moved)
    )
    operations = [
        head,
        labelled(_conditioned(store, account, incident_id, written, state.revision),
                 EscalationMovedError("the escalation started over")),
        *[labelled(_page_put(store, account, incident_id, state, page, now=now)) for page in pages],
    ]  # fmt: skip
    try:
        store.transact_growing(lambda: Transaction(operations, None))
    except TimerMovedError:
        return False
    return True


def pages_of(store: Store, account: str, incident_id: str) -> list[dict[str, Any]]:
    """The pages decided for an incident, in the order they were decided."""
    pk, _ = escalation_key(account, incident_id)
    return [deserialize(item) for item in store.query_partition(pk, prefix=PAGE_PREFIX)]


def _targets(store: Store, account: str, state: Escalation) -> list[Page]:
    """Who the level pages now: each user it names, and whoever each schedule it names has
    on call (nobody for a gap); one target of them, in turn, for round robin."""
    rule = state.rule
    targets = list(rule.targets)
    if rule.escalation_rule_assignment_strategy is AssignmentStrategy.ROUND_ROBIN:
        turn = store.table.sequence(ROUND_ROBIN_SORT_KEY).take(f"{account}#{rule.id}")[0]
        targets = [targets[(turn - 1) % len(targets)]]
    pages: dict[str, Page] = {}
    for target in targets:
        if target.type is TargetType.USER:
            pages.setdefault(target.id, Page(target.id))
            continue
        found = schedule_on_call(store, account, target.id, store.clock())
        if found is not None and found[0].user_id is not None:
            pages.setdefault(found[0].user_id, Page(found[0].user_id, target.id, found[1]))
    return list(pages.values())


def _triggered(store: Store, account: str, incident_id: str) -> bool:
    item = read_summary(store, account, incident_id)
    return item is not None and item.get("status", {}).get("S") == Status.TRIGGERED.value


def _read(store: Store, account: str, incident_id: str) -> Escalation | None:
    item = store.get(*escalation_key(account, incident_id))
    if item is None:
        return None
    values = deserialize(item)
    return Escalation(
        policy=EscalationPolicy.model_validate(values["policy"]),
        generation=int(values["generation"]), loop=int(values["loop"]),
        level=int(values["level"]), paged=bool(values["paged"]), next_at=values.get("next_at"),
        stopped=bool(values["stopped"]), revision=int(values["revision"]),
        urgency=Urgency(values.get("urgency", Urgency.HIGH)),
    )  # fmt: skip


def _item(account: str, incident_id: str, state: Escalation) -> Item:
    pk, sk = escalation_key(account, incident_id)
    return serialize({
        PK: pk, SK: sk, "Type": "escalation",
        "policy": state.policy.model_dump(mode="json"),
        "generation": state.generation, "loop": state.loop, "level": state.level,
        "paged": state.paged, "next_at": state.next_at, "stopped": state.stopped,
        "revision": state.revision, "urgency": state.urgency.value,
    })  # fmt: skip


def _conditioned(
    store: Store, account: str, incident_id: str, state: Escalation, revision: int
) -> Item:
    """A Put of the state, only over the revision read."""
    return {
        "Put": {
            "TableName": store.table_name,
            "Item": _item(account, incident_id, state),
            "ConditionExpression": "revision = :revision",
            "ExpressionAttributeValues": {":revision": {"N": str(revision)}},
        }
    }


def _page_put(
    store: Store, account: str, incident_id: str, state: Escalation, page: Page, *, now: datetime
) -> Item:
    """The page's decision, only if it was never decided."""
    pk, _ = escalation_key(account, incident_id)
    sk = page_sort_key(state.generation, state.loop, state.level, page.user_id)
    values = {
        PK: pk, SK: sk, "Type": PAGE_TYPE, "account_id": account, "incident_id": incident_id,
        "user_id": page.user_id,
        "generation": state.generation, "loop": state.loop, "level": state.level,
        "policy_id": state.policy.id, "policy_version": state.policy.version,
        "rule_id": state.rule.id, "schedule_id": page.schedule_id,
        "schedule_version": page.schedule_version, "decided_at": timestamp(now),
    }  # fmt: skip
    return {
        "Put": {
            "TableName": store.table_name,
            "Item": serialize(values),
            "ConditionExpression": f"attribute_not_exists({PK})",
        }
    }
