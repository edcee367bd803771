"""Handoffs: the materialized current and next shift (`on_call_now`) written with every
change that can move it, and moved at each handoff by the schedule's timer on the due-time
index (the sweep fires it), which is always due when the current shift ends.

Every write of the item is conditioned on the schedule's version it was worked out from
(an edit's own conditioned Put of the schedule, or the timer's check), so an edit racing a
handoff loses nothing: whichever commits second fails its condition, and the edit, which
moves the version, always works the item out again. A handoff the sweep fires late is
worked out at the time it fires, so a sweep that died costs lateness, never a wrong answer
(a read inside the next shift answers it before the handoff fires).
"""

from __future__ import annotations

from collections.abc import Sequence

from dynashard.query import Item
from dynashard.resharding import Operation, Transaction
from incidents.keys import oncall_sort_key, schedule_sort_key, teams_partition
from incidents.schedules.on_call_now import Known, known_at, known_item
from incidents.schedules.reads import find_schedule, overrides_reader
from incidents.schedules.stored import StoredSchedule
from incidents.store import Failure, Store, labelled
from incidents.table import item_key
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
    """The deletes of a schedule's materialized shifts and its handoff timer."""
    key = item_key(teams_partition(account), oncall_sort_key(schedule_id))
    delete = {"Delete": {"TableName": store.table_name, "Key": key}}
    return [labelled(delete), labelled(clear_timer(store, account, TimerKind.HANDOFF, schedule_id))]


def transact_with_now(
    store: Store,
    operations: Sequence[Operation[Failure]],
    account: str,
    known: Known,
    fired: Timer | None = None,
) -> None:
    """`operations` and the writes of `known` in one transaction, built again if the due
    index grows."""
    store.transact_growing(
        lambda: Transaction([*operations, *now_writes(store, account, known, fired)], None)
    )


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
