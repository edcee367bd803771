"""``make dev``'s on-call schedules for the first demo account: a schedule of its first team
(a weekly primary, business hours above it) with an override ahead, and a scratch schedule
the document's delete example removes; calendar feeds of the schedule and of the second
user. On a kept table the schedule (found by its name) is kept; the scratch schedule, the
override and the feeds' tokens are made anew."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from incidents.schedules import commands, feeds
from incidents.schedules.models import OverrideRequest, ScheduleRequest
from incidents.store import Caller, Store
from local.demo.data import START, DemoAccount

DEMO_SCHEDULE = "Payments on-call"
SCRATCH = "make dev scratch"


@dataclass(frozen=True)
class DemoSchedules:
    """The ids the document's examples name: the kept schedule, one to delete, an
    override of the kept one (ahead, so it can be deleted) and the feeds' tokens."""

    schedule: str
    scratch: str
    override: str
    schedule_feed: str
    user_feed: str


def schedule_body(account: DemoAccount, name: str = DEMO_SCHEDULE) -> dict[str, Any]:
    """A weekly primary rotation of the account's first three users, and above it a daily
    rotation of the same users in business hours (09:00-17:00 in London, weekdays): what
    the docs' schedule example renders."""
    users = [{"user_id": user.id} for user in account.users[:3]]
    start = (START - timedelta(days=START.weekday())).replace(hour=0)  # a Monday
    return {
        "name": name,
        "description": "Weekly primary; business hours rotate daily",
        "time_zone": "Europe/London",
        "team_ids": [account.teams[0].id],
        "schedule_layers": [
            {"name": "Weekly primary", "start": start.isoformat(), "users": users,
             "rotation_virtual_start": start.replace(hour=9).isoformat(),
             "rotation_turn_length_seconds": 7 * 86_400},
            {"name": "Business hours", "start": start.isoformat(), "users": users[::-1],
             "rotation_virtual_start": start.replace(hour=9).isoformat(),
             "rotation_turn_length_seconds": 86_400,
             "restrictions": [
                 {"type": "weekly_restriction", "start_time_of_day": "09:00:00",
                  "duration_seconds": 8 * 3600, "start_day_of_week": day}
                 for day in range(1, 6)
             ]},
        ],
    }  # fmt: skip


def override_body(account: DemoAccount) -> dict[str, Any]:
    """A day's override far ahead (it never covers now while you look)."""
    return {"start": "2099-01-05T09:00:00Z", "end": "2099-01-06T09:00:00Z",
            "user_id": account.users[1].id}  # fmt: skip


def demo_schedules(store: Store, account: DemoAccount) -> DemoSchedules:
    """The account's demo schedules and override, made where missing."""
    caller = Caller(account.account_id, account.users[0].id)
    listed = {s.name: s.id for s in commands.list_schedules(store, caller, limit=100).items}
    schedule = (
        listed.get(DEMO_SCHEDULE)
        or commands.create_schedule(
            store, caller, ScheduleRequest.model_validate(schedule_body(account))
        ).id
    )
    if SCRATCH in listed:
        commands.delete_schedule(store, caller, listed[SCRATCH])
    scratch = commands.create_schedule(
        store, caller, ScheduleRequest.model_validate(schedule_body(account, SCRATCH))
    ).id
    override = commands.create_override(
        store, caller, schedule, OverrideRequest.model_validate(override_body(account))
    ).id
    schedule_feed = feeds.rotate_schedule_feed(store, caller, schedule)
    user_feed = feeds.rotate_user_feed(store, caller, account.users[1].id)
    return DemoSchedules(schedule, scratch, override, schedule_feed, user_feed)
