"""Handoffs: the materialized current and next shift (`on_call_now`) written with every
change that can move it, and moved at each handoff by the schedule's timer on the due-time
index (the sweep fires it), which is always due when the current shift ends.

Every write of the item is conditioned on the schedule's version it was worked out from
(an edit's own conditioned Put of the schedule, or the timer's check), so an edit racing a
handoff loses nothing: whichever commits second fails its condition, and the edit, which
moves the version, always works the item out again. A handoff the sweep fires late is
worked out at the time it fires, so a sweep that died costs lateness, never a wrong answer
(a read inside the next shift answers it before the handoff fires).

Each write that changes who is on call now (a shift's end, or an edit or override that
takes effect at once) puts a ``schedule.handoff`` event on the account's events, in the same
transaction: the table's stream carries it to webhooks and EventBridge as it carries an
incident's. Its key and id come from the schedule and the instant the new shift began, so
a handoff worked out twice (an edit racing the timer) is one item, published once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta

from ksuid import Ksuid

from dynashard.query import Item
from dynashard.resharding import Operation, Transaction
from incidents.items import serialize
from incidents.keys import (
    event_index_key,
    handoff_key,
    oncall_members_sort_key,
    oncall_sort_key,
    schedule_sort_key,
    teams_partition,
)
from incidents.models import EventType, HandoffSchedule, ScheduleHandoff, timestamp
from incidents.schedules.on_call_now import Known, Shift, known_at, known_item
from incidents.schedules.reads import find_schedule, overrides_reader, read_known
from incidents.schedules.stored import StoredSchedule
from incidents.store import Failure, Store, labelled
from incidents.table import GSI2, item_key
from incidents.tenant_shards import Family
from incidents.timers.schedule import (
    Timer,
    TimerKind,
    TimerMovedError,
    claim,
    clear_timer,
    refire,
    set_timer,
)


def now_writes(
    store: Store, account: str, known: Known, fired: Timer | None = None
) -> list[Operation[Failure]]:
    """The writes of `known` and of its handoff timer (moving `fired` on, if it fires)."""
    put = labelled(store.put_operation(known_item(account, known)))
    if fired is not None:
        moved = TimerMovedError("the schedule's timer moved meanwhile")
        return [put, refire(store, fired, known.handoff_at, moved)]
    timer = Timer(account, TimerKind.HANDOFF, known.schedule_id, known.handoff_at)
    return [put, set_timer(store, timer)]


def cleared(store: Store, account: str, schedule_id: str) -> list[Operation[Failure]]:
    """The deletes of a schedule's materialized shifts, its members and its handoff timer."""
    keys = [
        item_key(teams_partition(account), sort_key)
        for sort_key in (oncall_sort_key(schedule_id), oncall_members_sort_key(schedule_id))
    ]
    deletes = [labelled({"Delete": {"TableName": store.table_name, "Key": key}}) for key in keys]
    return [*deletes, labelled(clear_timer(store, account, TimerKind.HANDOFF, schedule_id))]


def transact_with_now(
    store: Store,
    operations: Sequence[Operation[Failure]],
    account: str,
    known: Known,
    fired: Timer | None = None,
) -> None:
    """`operations` and the writes of `known` in one transaction (with the handoff's event,
    if who is on call now changes from what the item held), built again if the due index
    grows."""
    handoff = handoff_event(read_known(store, account, known.schedule_id), known, store.clock())

    def build() -> Transaction[Failure, None]:
        told = [] if handoff is None else [_handoff_write(store, account, handoff)]
        return Transaction([*operations, *now_writes(store, account, known, fired), *told], None)

    store.transact_growing(build)


JUST_BEFORE = timedelta(microseconds=1)


def handoff_event(before: Known | None, after: Known, now: datetime) -> ScheduleHandoff | None:
    """The handoff from what `before` held to `after`, written `now`, if who is on call
    changed: the new current shift's user against whoever `before` had on call just before
    it began (a sweep past both shifts it knew: the last of them). None for a schedule's
    first materialization, or when the current shift stayed whose it was."""
    new = after.current
    if before is None or (new.start, new.user_id) == (before.current.start, before.current.user_id):
        return None
    previous = before.answers(new.start - JUST_BEFORE) or before.next or before.current
    if previous.user_id == new.user_id:
        return None
    return ScheduleHandoff(
        id=_handoff_id(after.schedule_id, new),
        type=EventType.SCHEDULE_HANDOFF,
        at=timestamp(now),
        schedule=HandoffSchedule(id=after.schedule_id, name=after.name, version=after.version),
        user_id=new.user_id,
        previous_user_id=previous.user_id,
        shift_start=timestamp(new.start),
        shift_end=timestamp(new.end),
    )


def _handoff_id(schedule_id: str, shift: Shift) -> str:
    """The same id whoever works the handoff out: the instant, and a digest of the
    schedule and the instant as the rest (time-ordered as every event id)."""
    digest = hashlib.sha256(f"{schedule_id}\n{timestamp(shift.start)}".encode()).digest()
    return f"evt_{Ksuid(datetime=shift.start, payload=digest[:16])}"


def _handoff_write(store: Store, account: str, event: ScheduleHandoff) -> Operation[Failure]:
    """The event's item, in the schedule's partition (by the shift's start) and in the
    account's events index (by when it was written: an oldest-first walk's settled horizon
    holds), as the first writer of that handoff made it: a second, racing writer changes
    nothing and cannot fail the transaction."""
    pk, sk = handoff_key(account, event.schedule.id, event.shift_start)
    count = store.shards.write_count(account, Family.EVENTS)
    gsi2pk, gsi2sk = event_index_key(account, event.id, event.at, count)
    values = serialize({
        **event.model_dump(mode="json", by_alias=True),
        GSI2.partition_key: gsi2pk,
        GSI2.sort_key: gsi2sk,
        "Type": "event",
        "ExpiresAt": store.event_expiry(event.at),
    })  # fmt: skip
    names = {f"#a{n}": name for n, name in enumerate(values)}
    update = {
        "Update": {
            "TableName": store.table_name,
            "Key": item_key(pk, sk),
            "UpdateExpression": "SET "
            + ", ".join(f"{name} = if_not_exists({name}, :{name[1:]})" for name in names),
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {
                f":{name[1:]}": values[attribute] for name, attribute in names.items()
            },
        }
    }
    return labelled(update, None, store.shards.sharded(account, Family.EVENTS))


def hand_off(store: Store, timer: Timer) -> bool:
    """Fire a schedule's handoff: its current and next shift worked out at the time it
    fires and the timer moved on to the next handoff (the claim), in one transaction with a
    check that the schedule is as read; False if either failed (an edit moved both)."""
    account, moved = timer.account, TimerMovedError("the schedule changed meanwhile")
    schedule = find_schedule(store, account, timer.subject)
    try:
        if schedule is None:  # deleted: its timer goes
            store.transact([claim(store, timer)], [moved])
            return True
        overrides = overrides_reader(store, account, schedule.id)
        known = known_at(schedule, overrides, store.clock())
        checked = labelled(_version_check(store, account, schedule), moved)
        transact_with_now(store, [checked], account, known, fired=timer)
    except TimerMovedError:
        return False
    return True


def _version_check(store: Store, account: str, schedule: StoredSchedule) -> Item:
    return {
        "ConditionCheck": {
            "TableName": store.table_name,
            "Key": item_key(teams_partition(account), schedule_sort_key(schedule.id)),
            "ConditionExpression": "version = :version",
            "ExpressionAttributeValues": {":version": {"N": str(schedule.version)}},
        }
    }
