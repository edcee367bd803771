"""Heartbeats: create, list, get, change, delete, ping, and expire (fired by the sweep).

A heartbeat's item is sharded by name (each ping writes it). Its expiry is a timer
(`incidents.timers`) set in the same transaction as every change that moves it: created or
enabled, it is due one interval on; each ping moves it one interval past the ping; disabled
or deleted, it is cleared. When it comes due the sweep opens an incident "<name> is
expired" for the heartbeat's integration (its team, its default severity) in one
transaction with the timer's claim and the heartbeat's move to ``expired``: one incident
per expiry. The next ping resolves it and starts the interval again; until then (disabled
and enabled again, re-timed) no expiry runs beside it, so no incident is forgotten.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from dynashard import FanOutQuery, shard_keys
from dynashard.query import Item
from dynashard.resharding import Operation, Transaction
from incidents.account_limits import Limited, count_move, counted
from incidents.alerts.integrations import get_integration
from incidents.errors import (
    ConflictError,
    NotFoundError,
    VersionConflictError,
)
from incidents.escalation.engine import escalation_for
from incidents.heartbeats.models import (
    Heartbeat,
    HeartbeatChanges,
    HeartbeatList,
    HeartbeatStatus,
    NewHeartbeat,
    Pong,
)
from incidents.incident.commands import load_summary, update_incident
from incidents.incident.create import create_incident
from incidents.items import deserialize, serialize
from incidents.keys import HEARTBEAT_SHARDS, heartbeat_base, heartbeat_key
from incidents.models import IncidentSummary, Severity, Status, timestamp
from incidents.paging import partition_stream
from incidents.requests import CreateIncident, UpdateIncident
from incidents.store import Caller, Failure, Store, labelled
from incidents.table import PK, SK
from incidents.timeline.events import pause_before_retry
from incidents.timers.schedule import (
    Timer,
    TimerKind,
    TimerMovedError,
    claim,
    clear_timer,
    set_timer,
)

PING_ATTEMPTS = 8
EXPIRED_SEVERITY = Severity.SEV2
"""An expiry's incident when its integration names no default severity (Opsgenie's
heartbeat alerts are P1 by default; a late check is serious, short of an outage)."""


def create_heartbeat(store: Store, caller: Caller, request: NewHeartbeat) -> Heartbeat:
    """The heartbeat, the account's count of heartbeats (409 at its limit) and, if enabled,
    its expiry one interval on, in one transaction; its integration must be the
    account's."""
    get_integration(store, caller, request.integration_id)  # 404 for another account's
    now = store.clock()
    heartbeat = Heartbeat(
        **request.model_dump(),
        status=HeartbeatStatus.ACTIVE if request.enabled else HeartbeatStatus.DISABLED,
        created_at=timestamp(now),
        last_ping_at=None,
        expires_at=timestamp(now + request.interval_unit.of(request.interval))
        if request.enabled
        else None,
        incident_id=None,
    )
    put = store.put_operation(_item(caller.account_id, heartbeat), new=True)
    exists = labelled(put, ConflictError(f"a heartbeat named {request.name} exists"))
    moved = count_move(store, caller.account_id, Limited.HEARTBEATS, +1)
    counted(
        partial(
            store.transact_growing,
            partial(_with_expiry, store, caller.account_id, heartbeat, exists, moved),
        )
    )
    return heartbeat


def list_heartbeats(
    store: Store, caller: Caller, *, limit: int = 50, cursor: str | None = None
) -> HeartbeatList:
    """A page of the account's heartbeats by name (merged from its shards)."""
    streams = [
        partition_stream(store, key)
        for key in shard_keys(heartbeat_base(caller.account_id), HEARTBEAT_SHARDS)
    ]
    page = store.engine.page(
        FanOutQuery(streams, binding=f"{caller.account_id}#heartbeats", limit=limit, cursor=cursor)
    )
    return HeartbeatList(
        items=[_heartbeat(item) for item in page.items],
        next_cursor=page.next_cursor,
        has_more=page.has_more,
    )


def get_heartbeat(store: Store, caller: Caller, name: str) -> Heartbeat:
    """One heartbeat of the caller's account, or 404."""
    return _heartbeat(_stored(store, caller.account_id, name))


def update_heartbeat(
    store: Store, caller: Caller, name: str, changes: HeartbeatChanges
) -> Heartbeat:
    """Change its interval or enable or disable it; its expiry moves in the same
    transaction (one interval from now when enabled or re-timed, cleared when disabled).
    The incident an expiry opened stays named until it is resolved (by a ping, or by a
    person): while it is open, the heartbeat stays expired and opens no other."""

    def changed(current: Heartbeat, now: datetime) -> Heartbeat:
        after = current.model_copy(update=changes.model_dump(exclude_unset=True))
        if not after.enabled:  # its expiry's incident stays named: a ping resolves it
            return after.model_copy(update={"status": HeartbeatStatus.DISABLED, "expires_at": None})
        if _names_open_incident(store, caller, current):  # no second expiry beside it
            return after.model_copy(update={"status": HeartbeatStatus.EXPIRED, "expires_at": None})
        expires_at = timestamp(now + after.period)
        return after.model_copy(
            update={"status": HeartbeatStatus.ACTIVE, "expires_at": expires_at, "incident_id": None}
        )

    return _rewrite(store, caller.account_id, name, changed)[1]


def delete_heartbeat(store: Store, caller: Caller, name: str) -> None:
    """Delete it and its expiry, freeing its place in the account's count (an open expiry
    incident stays, for people to resolve)."""
    pk, sk = heartbeat_key(caller.account_id, name)
    missing = NotFoundError(f"heartbeat {name} not found")
    counted(lambda: store.transact_growing(
        lambda: Transaction(
            [
                labelled(store.delete_operation(pk, sk), missing),
                labelled(clear_timer(store, caller.account_id, TimerKind.HEARTBEAT, name)),
                count_move(store, caller.account_id, Limited.HEARTBEATS, -1),
            ],
            None,
        )
    ))  # fmt: skip


def ping_heartbeat(store: Store, caller: Caller, integration_id: str, name: str) -> Pong:
    """A ping from `integration_id`'s key: an expired heartbeat's incident is resolved (before
    the heartbeat forgets it, so a ping retried after a failure resolves it still), and the
    expiry moves one interval past now. A disabled heartbeat notes the ping and stays
    disabled. 404 for a heartbeat of another integration."""

    def pinged(current: Heartbeat, now: datetime) -> Heartbeat:
        if current.integration_id != integration_id:
            raise NotFoundError(f"heartbeat {name} not found")
        if current.incident_id is not None:  # first: a retried ping still finds it named
            _resolve(store, caller, current.incident_id)
        return current.model_copy(
            update={
                "last_ping_at": timestamp(now),
                "status": HeartbeatStatus.ACTIVE if current.enabled else HeartbeatStatus.DISABLED,
                "expires_at": timestamp(now + current.period) if current.enabled else None,
                "incident_id": None,
            }
        )

    before, after = _rewrite(store, caller.account_id, name, pinged)
    return Pong(
        name=name,
        status=after.status,
        expires_at=after.expires_at,
        resolved_incident_id=before.incident_id,
    )


def _rewrite(
    store: Store, account: str, name: str, change: Callable[[Heartbeat, datetime], Heartbeat]
) -> tuple[Heartbeat, Heartbeat]:
    """Read the heartbeat and write ``change(it, now)`` with its expiry, on the heartbeat as
    read; read and change it again when another write came first. (Before, after.)"""
    for attempt in range(PING_ATTEMPTS):
        current = _heartbeat(_stored(store, account, name))
        after = change(current, store.clock())
        write = _put_as_read(store, account, after, current)
        try:
            store.transact_growing(partial(_with_expiry, store, account, after, write))
        except VersionConflictError:
            pause_before_retry(attempt)
            continue
        return current, after
    raise VersionConflictError("the heartbeat keeps changing; retry")


def expire_heartbeat(store: Store, timer: Timer) -> bool:
    """Fire a heartbeat's expiry: an incident "<name> is expired" for its integration, the
    timer's claim and the heartbeat's move to expired, in one transaction. False if the
    claim failed (pinged, changed or deleted since the sweep read the timer)."""
    item = store.get(*heartbeat_key(timer.account, timer.subject))
    if item is None:
        return False
    current = _heartbeat(item)
    integration = Caller(timer.account, current.integration_id)
    try:
        routed = get_integration(store, integration, current.integration_id)
        severity, teams = routed.default_severity, [routed.team_id] if routed.team_id else []
        urgency = routed.urgency_at(store.clock())
        escalates = escalation_for(store, timer.account, routed.escalation_policy_id, urgency)
    except NotFoundError:  # deleted since: the expiry still opens its incident, unrouted
        severity, teams = None, []
        escalates = escalation_for(store, timer.account, None)
    request = CreateIncident(
        title=f"{current.name} is expired",
        severity=severity or EXPIRED_SEVERITY,
        details={"heartbeat": {"name": current.name, "expired_at": timestamp(timer.due_at),
                               "last_ping_at": current.last_ping_at}},
        teams=teams,
    )  # fmt: skip
    moved = TimerMovedError("the heartbeat's expiry moved")

    def expired(summary: IncidentSummary) -> list[Operation[Failure]]:
        after = current.model_copy(
            update={"status": HeartbeatStatus.EXPIRED, "expires_at": None,
                    "incident_id": summary.id}
        )  # fmt: skip
        return [
            labelled(claim(store, timer), moved),
            _put_as_read(store, timer.account, after, current),
            *escalates(summary.id),
        ]

    try:
        create_incident(store, integration, request, also=expired)
    except TimerMovedError:
        return False
    except NotFoundError:  # its team was deleted since: the expiry still opens, unrouted
        try:
            unrouted = request.model_copy(update={"teams": []})
            create_incident(store, integration, unrouted, also=expired)
        except TimerMovedError:
            return False
    return True


def _names_open_incident(store: Store, caller: Caller, heartbeat: Heartbeat) -> bool:
    """Whether the heartbeat names its expiry's incident and nobody resolved it since."""
    if heartbeat.incident_id is None:
        return False
    try:
        summary = load_summary(store, caller, heartbeat.incident_id)
    except NotFoundError:
        return False
    return summary.status is not Status.RESOLVED


def _resolve(store: Store, caller: Caller, incident_id: str) -> None:
    """Resolve the expiry incident a ping ended (already resolved by a person: nothing)."""
    try:
        update_incident(store, caller, incident_id, UpdateIncident(status=Status.RESOLVED))
    except NotFoundError:
        return


def _expiry(account: str, heartbeat: Heartbeat) -> Timer:
    assert heartbeat.expires_at is not None, "only a watched heartbeat has an expiry"
    return Timer(
        account, TimerKind.HEARTBEAT, heartbeat.name, datetime.fromisoformat(heartbeat.expires_at)
    )


def _with_expiry(
    store: Store,
    account: str,
    heartbeat: Heartbeat,
    write: Operation[Failure],
    *also: Operation[Failure],
) -> Transaction[Failure, None]:
    """`write` of the heartbeat, and its expiry set where it has one, cleared where not,
    with `also` (built again after a growth of the due index, at the grown count)."""
    expiry = (
        set_timer(store, _expiry(account, heartbeat))
        if heartbeat.expires_at is not None
        else labelled(clear_timer(store, account, TimerKind.HEARTBEAT, heartbeat.name))
    )
    return Transaction([write, expiry, *also], None)


def _put_as_read(
    store: Store, account: str, after: Heartbeat, before: Heartbeat
) -> Operation[Failure]:
    """The Put of the heartbeat as `after`, conditioned on it being as `before` was read."""
    put = store.put_operation(_item(account, after))
    put["Put"]["ConditionExpression"] = f"attribute_exists({PK}) AND revision = :seen"
    put["Put"]["ExpressionAttributeValues"] = {":seen": {"S": _revision(before)}}
    return labelled(put, VersionConflictError("the heartbeat changed meanwhile; retry"))


def _revision(heartbeat: Heartbeat) -> str:
    """What changes with every write of a heartbeat: its fields that any change moves."""
    return "|".join(
        str(value)
        for value in (
            heartbeat.status.value,
            heartbeat.last_ping_at,
            heartbeat.expires_at,
            heartbeat.enabled,
            heartbeat.interval,
            heartbeat.interval_unit.value,
        )
    )


def _item(account: str, heartbeat: Heartbeat) -> Item:
    pk, sk = heartbeat_key(account, heartbeat.name)
    fields = heartbeat.model_dump(mode="json")
    return serialize({PK: pk, SK: sk, "Type": "heartbeat", **fields,
                      "revision": _revision(heartbeat)})  # fmt: skip


def _stored(store: Store, account: str, name: str) -> Item:
    item = store.get(*heartbeat_key(account, name))
    if item is None:
        raise NotFoundError(f"heartbeat {name} not found")
    return item


def _heartbeat(item: Item) -> Heartbeat:
    values: dict[str, Any] = deserialize(item)
    return Heartbeat.model_validate({name: values.get(name) for name in Heartbeat.model_fields})
