"""Calendar feeds at secret URLs: a schedule's shifts, and one user's shifts on every
schedule, for calendar apps that subscribe by URL alone (no header, no sign-in). The token in
the URL is the credential (`incidents.feed_tokens`), replaced (and the old URL dead) by
each rotation."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from dynashard.query import Item
from incidents.errors import NotFoundError
from incidents.feed_tokens import FeedNotFoundError, new_token
from incidents.items import deserialize
from incidents.keys import (
    PROFILE_SK,
    feed_sort_key,
    schedule_sort_key,
    teams_partition,
    user_partition,
)
from incidents.models import timestamp
from incidents.schedules.calendar_feed import FeedShift, calendar_feed
from incidents.schedules.oncalls import OnCallFilter, rendered_shifts, selected_schedules
from incidents.schedules.reads import find_schedule
from incidents.schedules.rendering import longest_range
from incidents.schedules.stored import StoredSchedule, keyed
from incidents.store import Caller, Store
from incidents.users import require_self_or_manager

AHEAD = timedelta(days=90)
"""How far ahead a feed lists shifts (what a render may hold at its turns, if less)."""
BEHIND = timedelta(days=7)
"""How far back: the last week's shifts stay in a subscriber's calendar."""


def rotate_schedule_feed(store: Store, caller: Caller, schedule_id: str) -> str:
    """A new token for the schedule's feed (the old one stops working); 404 for a schedule
    the account does not have."""
    check = store.exists_check(teams_partition(caller.account_id), schedule_sort_key(schedule_id))
    missing = NotFoundError(f"schedule {schedule_id} not found")
    return _rotate(store, caller, schedule_id, check, missing)


def rotate_user_feed(store: Store, caller: Caller, user_id: str) -> str:
    """A new token for a user's feed: theirs, or anyone's for an owner or admin (to end a
    leaked one)."""
    require_self_or_manager(store, caller, user_id)
    check = store.exists_check(user_partition(caller.account_id, user_id), PROFILE_SK)
    missing = NotFoundError(f"user {user_id} has no profile")
    return _rotate(store, caller, user_id, check, missing)


def _rotate(
    store: Store, caller: Caller, subject_id: str, exists: Item, missing: NotFoundError
) -> str:
    """A new secret for the feed of `subject_id`, which `exists` checks is there."""
    token, stored = new_token(caller.account_id)
    values = {
        "Type": "calendar_feed",
        "subject_id": subject_id,
        "secret_sha256": stored,
        "created_at": timestamp(store.clock()),
    }
    put = store.put_operation(keyed(caller.account_id, feed_sort_key(subject_id), values))
    store.transact([put, exists], [None, missing])
    return token


def schedule_feed(store: Store, account: str, schedule_id: str) -> bytes:
    """The schedule's shifts from a week back to 90 days ahead, titled by who is on call
    (`account`: the one its feed's token named, checked: `incidents.feed_tokens`)."""
    schedule = find_schedule(store, account, schedule_id)
    if schedule is None:
        raise FeedNotFoundError
    found = rendered_shifts(store, account, schedule, *_span(store, schedule))
    names = _names(store, account, {shift.user_id for shift in found})
    shifts = [
        FeedShift(schedule_id, s.user_id, s.start, s.end, f"On call: {names(s.user_id)}")
        for s in found
    ]
    return calendar_feed(schedule_id, schedule.name, shifts, store.clock())


def user_feed(store: Store, account: str, user_id: str) -> bytes:
    """The user's shifts on every schedule they may be on, titled by the schedule (as
    `schedule_feed`, `account` checked)."""
    selected = OnCallFilter(user_ids=frozenset({user_id}))
    shifts = []
    for known in selected_schedules(store, account, selected):
        schedule = find_schedule(store, account, known.schedule_id)
        found = [] if schedule is None else rendered_shifts(
            store, account, schedule, *_span(store, schedule)
        )  # fmt: skip
        shifts += [
            FeedShift(known.schedule_id, user_id, s.start, s.end, f"On call: {known.name}")
            for s in found
            if s.user_id == user_id
        ]
    names = _names(store, account, {user_id})
    return calendar_feed(user_id, f"On call: {names(user_id)}", shifts, store.clock())


def _span(store: Store, schedule: StoredSchedule) -> tuple[datetime, datetime]:
    """`BEHIND` to `AHEAD` of now, shortened in proportion for a schedule whose turns
    allow a shorter render."""
    span = min(BEHIND + AHEAD, longest_range(schedule.layers()))
    since = store.clock() - span * (BEHIND / (BEHIND + AHEAD))
    return since, since + span


def _names(store: Store, account: str, user_ids: set[str | None]) -> Callable[[str | None], str]:
    """Each user's name (their id if they have none)."""
    keys = [(user_partition(account, u), PROFILE_SK) for u in sorted(filter(None, user_ids))]
    found = {
        values["id"]: values.get("name") or values["id"]
        for values in map(deserialize, store.batch_get(keys))
    }
    return lambda user_id: found.get(user_id or "", user_id or "nobody")
