"""Maintenance windows: create, list, get, end early, delete before the start, the alerts a
window suppressed, and ``resolve_on_end`` (fired by the sweep).

A window's item sits in its account's partition, by id. Until it ends it also has an entry
in the account's live set, which every alert reads (`incidents.alerts.suppression`):
both are written in one transaction, with the check that its team or integration is the
account's and, with ``resolve_on_end``, the timer at its end. Ending it early sets its end
to now, takes it out of the live set and moves that timer to now, in one transaction;
deleting it (only before its start) removes all three. Its status is read from the clock,
never stored: nothing has to happen at its start or its end for suppression to begin and
stop on time.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from botocore.exceptions import ClientError

from dynashard import FanOutQuery, shard_keys
from dynashard.query import Item
from dynashard.resharding import Transaction
from incidents.account_limits import Limited
from incidents.alerts.models import SuppressedStatus
from incidents.alerts.suppression import (
    LiveWindow,
    live_count,
    live_entries,
    live_removals,
    suppressed_count,
)
from incidents.errors import ConflictError, DomainError, NotFoundError, VersionConflictError
from incidents.items import deserialize, serialize
from incidents.keys import (
    SUPPRESSED_SHARDS,
    integrations_partition,
    live_windows_gate_key,
    maintenance_partition,
    suppressed_base,
    teams_partition,
)
from incidents.maintenance.models import (
    MAX_LENGTH,
    MaintenanceWindow,
    MaintenanceWindowList,
    NewMaintenanceWindow,
    SuppressedAlert,
    SuppressedAlertList,
    WindowStatus,
    status_at,
)
from incidents.models import parse_timestamp, timestamp
from incidents.paging import DEFAULT_LIMIT, partition_stream
from incidents.store import Caller, Failure, Store, condition_failed, labelled, new_id
from incidents.table import PK, SK, item_key, key_of
from incidents.timeline.events import pause_before_retry
from incidents.timers.schedule import (
    Timer,
    TimerKind,
    TimerMovedError,
    claim,
    clear_timer,
    set_timer,
)

CREATE_ATTEMPTS = 8


class WindowTimesError(DomainError):
    """Times only the clock refuses: an end already past, a window longer than `MAX_LENGTH`."""

    code = "validation_error"


def create_window(store: Store, caller: Caller, request: NewMaintenanceWindow) -> MaintenanceWindow:
    """The window, its live entries, the check that its team or integration is the
    account's (404) and, with ``resolve_on_end``, the timer at its end, in one transaction.
    A start in the past is now; an account's windows not yet ended are counted against its
    limit (every alert reads them all, so it bounds what an alert costs) under its live
    set's version, which the create moves."""
    now = store.clock()
    start = max(request.start_time, now)
    if request.end_time <= now:
        raise WindowTimesError("end_time: must be in the future")
    if request.end_time - start > MAX_LENGTH:
        raise WindowTimesError(f"a maintenance window lasts at most {MAX_LENGTH.days} days")
    start_time, end_time = timestamp(start), timestamp(request.end_time)
    window = MaintenanceWindow(
        **request.model_dump(exclude={"start_time", "end_time"}),
        id=new_id("mw"), start_time=start_time, end_time=end_time,
        status=status_at(start_time, end_time, timestamp(now)), ended_early=False,
        suppressed_alerts=0, created_at=timestamp(now),
    )  # fmt: skip
    account, limit = caller.account_id, store.limits.maintenance_windows
    for attempt in range(CREATE_ATTEMPTS):
        version = _live_version(store, account)
        if live_count(store, account) >= limit:
            raise Limited.MAINTENANCE_WINDOWS.reached(limit)
        try:
            store.transact_growing(partial(_created, store, account, window, version))
        except VersionConflictError:
            pause_before_retry(attempt)
            continue
        return window
    raise VersionConflictError("the account's maintenance windows keep changing; retry")


def list_windows(
    store: Store, caller: Caller, *, limit: int = DEFAULT_LIMIT, cursor: str | None = None
) -> MaintenanceWindowList:
    """A page of the account's windows, newest first (each with its count: a batch read)."""
    account = caller.account_id
    stream = partition_stream(store, maintenance_partition(account))
    page = store.engine.page(
        FanOutQuery(
            [stream],
            binding=f"{account}#maintenance-windows",
            limit=limit,
            cursor=cursor,
            descending=True,
        )
    )
    return MaintenanceWindowList(
        items=[_window(store, account, item) for item in page.items],
        next_cursor=page.next_cursor,
        has_more=page.has_more,
    )


def get_window(store: Store, caller: Caller, window_id: str) -> MaintenanceWindow:
    """One window of the caller's account, or 404."""
    return _window(store, caller.account_id, _stored(store, caller.account_id, window_id))


def end_window(store: Store, caller: Caller, window_id: str) -> MaintenanceWindow:
    """End an ongoing window now: its end becomes now, it leaves the live set (the next
    alert is not suppressed) and its ``resolve_on_end`` timer moves to now, in one
    transaction. A window not started is a 409 (delete it instead), as is one ended."""
    account, moment = caller.account_id, store.clock()
    current = _window(store, account, _stored(store, account, window_id))
    now = timestamp(moment)
    status = status_at(current.start_time, current.end_time, now)
    if status is WindowStatus.SCHEDULED:
        raise ConflictError(f"maintenance window {window_id} has not started: delete it instead")
    ended = ConflictError(f"maintenance window {window_id} has ended")
    if status is WindowStatus.ENDED:
        raise ended
    update = {
        "Update": {
            "TableName": store.table_name,
            "Key": _key(account, window_id),
            "UpdateExpression": "SET end_time = :now, ended_early = :true",
            "ConditionExpression": "end_time = :end",  # not ended by another request since
            "ExpressionAttributeValues": serialize(
                {":now": now, ":true": True, ":end": current.end_time}
            ),
        }
    }

    def ending() -> Transaction[Failure, None]:
        timer = Timer(account, TimerKind.MAINTENANCE_END, window_id, moment)
        return Transaction(
            [
                labelled(update, ended),
                *map(labelled, live_removals(store, account, window_id, current.end_time)),
                *([set_timer(store, timer)] if current.resolve_on_end else []),
            ],
            None,
        )

    store.transact_growing(ending)
    return current.model_copy(
        update={"end_time": now, "ended_early": True, "status": WindowStatus.ENDED}
    )


def delete_window(store: Store, caller: Caller, window_id: str) -> None:
    """Delete a window that has not started, its live entries and its timer. One that has
    started is a 409: it is kept, with what it suppressed (end it early instead)."""
    account = caller.account_id
    values = deserialize(_stored(store, account, window_id))
    now = timestamp(store.clock())
    started = ConflictError(
        f"maintenance window {window_id} has started: it is kept, with the alerts it "
        "suppressed (end it early instead)"
    )
    if values["start_time"] <= now:
        raise started
    delete = {
        "Delete": {
            "TableName": store.table_name,
            "Key": _key(account, window_id),
            "ConditionExpression": "start_time > :now",
            "ExpressionAttributeValues": {":now": {"S": now}},
        }
    }
    try:
        store.transact(
            [
                delete,
                *live_removals(store, account, window_id, values["end_time"]),
                clear_timer(store, account, TimerKind.MAINTENANCE_END, window_id),
            ],
            [started],
        )
    except ConflictError:
        _stored(store, account, window_id)  # deleted meanwhile: a 404, as a second DELETE is
        raise


def list_suppressed(
    store: Store,
    caller: Caller,
    window_id: str,
    *,
    limit: int = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> SuppressedAlertList:
    """A page of what the window kept of each alert key, by integration and dedup key
    (merged from its shards); 404 for a window outside the caller's account."""
    account = caller.account_id
    _stored(store, account, window_id)
    streams = [
        partition_stream(store, key)
        for key in shard_keys(suppressed_base(account, window_id), SUPPRESSED_SHARDS)
    ]
    binding = f"{account}#{window_id}#suppressed"
    page = store.engine.page(FanOutQuery(streams, binding=binding, limit=limit, cursor=cursor))
    return SuppressedAlertList(
        items=[_suppressed(item) for item in page.items],
        next_cursor=page.next_cursor,
        has_more=page.has_more,
    )


def resolve_at_end(store: Store, timer: Timer) -> bool:
    """Fire a window's end (``resolve_on_end``): each of its suppressed alerts still
    triggered is resolved, then the timer is claimed. A window's alerts may be more than a
    transaction holds, so each is its own update, which only a triggered one passes: a run
    that dies before the claim leaves the timer due, and the next one resolves the rest.
    False if the claim failed (fired by an overlapping run)."""
    pages = store.client.get_paginator("query")
    for key in shard_keys(suppressed_base(timer.account, timer.subject), SUPPRESSED_SHARDS):
        for page in pages.paginate(  # on this thread: the sweep fires on the engine's pool
            TableName=store.table_name,
            KeyConditionExpression=f"{PK} = :pk",
            FilterExpression="#status = :triggered",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={":pk": {"S": key},
                                       ":triggered": {"S": SuppressedStatus.TRIGGERED.value}},
        ):  # fmt: skip
            for item in page["Items"]:
                _resolve(store, item)
    try:
        store.transact([claim(store, timer)], [TimerMovedError("the window's end moved")])
    except TimerMovedError:
        return False
    return True


def _resolve(store: Store, item: Item) -> None:
    """Resolve one suppressed alert at its window's end, unless a resolve came first."""
    try:
        store.client.update_item(
            TableName=store.table_name,
            Key=key_of(item),
            UpdateExpression="SET #status = :resolved, resolved_at_end = :true",
            ConditionExpression="#status = :triggered",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=serialize(
                {":resolved": SuppressedStatus.RESOLVED.value, ":true": True,
                 ":triggered": SuppressedStatus.TRIGGERED.value}
            ),
        )  # fmt: skip
    except ClientError as error:
        if not condition_failed(error):
            raise


def _created(
    store: Store, account: str, window: MaintenanceWindow, version: int
) -> Transaction[Failure, None]:
    """The create's transaction (built again after a growth of the due index)."""
    scope = window.team_id or window.integration_id
    assert scope is not None, "a window is on a team or an integration"
    on_team = window.team_id is not None
    partition = teams_partition(account) if on_team else integrations_partition(account)
    missing = NotFoundError(f"{'team' if on_team else 'integration'} {scope} not found")
    live = LiveWindow(window.id, scope, window.start_time, window.end_time)
    end = Timer(account, TimerKind.MAINTENANCE_END, window.id, parse_timestamp(window.end_time))
    return Transaction(
        [
            labelled(store.put_operation(_item(account, window), new=True)),
            *map(labelled, live_entries(store, account, live)),
            labelled(store.exists_check(partition, scope), missing),
            labelled(_move_live_version(store, account, version),
                     VersionConflictError("another window was created meanwhile")),
            *([set_timer(store, end)] if window.resolve_on_end else []),
        ],
        None,
    )  # fmt: skip


def _live_version(store: Store, account: str) -> int:
    """The version of the account's live set (0 before its first window)."""
    item = store.get(*live_windows_gate_key(account))
    return int(item["version"]["N"]) if item is not None else 0


def _move_live_version(store: Store, account: str, seen: int) -> Item:
    """The Put that moves the live set's version on from `seen`, only from `seen`."""
    pk, sk = live_windows_gate_key(account)
    put: dict[str, Any] = {
        "TableName": store.table_name,
        "Item": serialize({PK: pk, SK: sk, "Type": "live_windows_gate", "version": seen + 1}),
    }
    if seen:
        put["ConditionExpression"] = "version = :seen"
        put["ExpressionAttributeValues"] = {":seen": {"N": str(seen)}}
    else:
        put["ConditionExpression"] = f"attribute_not_exists({PK})"
    return {"Put": put}


def _key(account: str, window_id: str) -> Item:
    return item_key(maintenance_partition(account), window_id)


def _item(account: str, window: MaintenanceWindow) -> Item:
    fields = window.model_dump(mode="json", exclude={"status", "suppressed_alerts"})
    return serialize({PK: maintenance_partition(account), SK: window.id,
                      "Type": "maintenance_window", **fields})  # fmt: skip


def _stored(store: Store, account: str, window_id: str) -> Item:
    item = store.get(maintenance_partition(account), window_id)
    if item is None:
        raise NotFoundError(f"maintenance window {window_id} not found")
    return item


def _window(store: Store, account: str, item: Item) -> MaintenanceWindow:
    """A stored window, its status by the clock and its count read."""
    values: dict[str, Any] = deserialize(item)
    fields = {name: values.get(name) for name in MaintenanceWindow.model_fields}
    status = status_at(values["start_time"], values["end_time"], timestamp(store.clock()))
    count = suppressed_count(store, account, values["id"])
    return MaintenanceWindow.model_validate(
        {**fields, "status": status, "suppressed_alerts": count}
    )


def _suppressed(item: Item) -> SuppressedAlert:
    values: dict[str, Any] = deserialize(item)
    fields = {name: values.get(name) for name in SuppressedAlert.model_fields}
    return SuppressedAlert.model_validate(
        {**fields, "resolved_at_end": values.get("resolved_at_end", False)}
    )
