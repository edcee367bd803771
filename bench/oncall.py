"""Who is on call at the issue's scale: one account with 1,000 schedules of 3 layers of 8
users each and 10,000 overrides.

Reproduce: ``make bench`` (or ``python -m bench.oncall``; ``SCHEDULES`` and ``OVERRIDES``
scale it down). On DynamoDB Local:

- **Now, for the whole account** (``GET /oncalls``): the materialized current and next
  shift of every schedule, one Query of the account's teams partition (paged by 1 MB);
  requests, read units against the floor (reading one item per schedule, by DynamoDB's
  rules: 4 KB a unit, strongly consistent) and latency (median of `RUNS`).
- **The baseline**: the same answer computed naively, each schedule read (its item, its
  versions, its overrides) and rendered at now; its requests, read units and latency, and
  the ratio.
- **A 90-day render** of one schedule (``GET /schedules/{id}``, 90 days): latency.
- **Handoffs per hour**: every schedule's handoffs fired over an hour of simulated time as
  the sweep fires them, each with its ``schedule.handoff`` event; write and read units per
  handoff against the floor (writing the schedule's one item: a unit a write).

Checked: the answer now equals the engine's for every schedule.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.support.consumed import Units
from bench.support.report import recording_tables, save
from dynashard.query import Item, item_size
from dynashard.resharding import Transaction
from incidents.keys import oncalls_prefix, teams_partition
from incidents.requests import SaveProfile
from incidents.schedules import commands
from incidents.schedules.engine import on_call_at
from incidents.schedules.handoffs import hand_off, now_writes
from incidents.schedules.model import Override
from incidents.schedules.models import ScheduleRequest
from incidents.schedules.on_call_now import Known, known_at
from incidents.schedules.oncalls import OnCallFilter, on_call
from incidents.schedules.reads import overrides_between, overrides_reader, read_schedule
from incidents.schedules.stored import override_item
from incidents.store import Caller, Failure, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.timers.firing import Fire, FireHere
from incidents.timers.schedule import Timer, TimerKind
from incidents.timers.sweep import sweep
from incidents.users import save_profile
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

SCHEDULES = int(os.environ.get("SCHEDULES", "1000"))
OVERRIDES = int(os.environ.get("OVERRIDES", "10000"))
LAYERS, USERS = 3, 8
RUNS = 5
T0 = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
TABLE = "bench-oncall"
WRITERS = 8
TURNS = (86_400, 7 * 86_400, 12 * 3600)
"""Each layer's turn: a daily, a weekly and a twelve-hour rotation."""


def schedule_request(users: list[str], n: int) -> ScheduleRequest:
    """Three layers of eight users, the top one in business hours."""
    layers = []
    for index, turn in enumerate(TURNS):
        layer: dict[str, Any] = {
            "name": f"Layer {index + 1}",
            "start": "2027-01-04T00:00:00Z",
            "users": [{"user_id": u} for u in users[index:] + users[:index]],
            "rotation_virtual_start": f"2027-01-04T{(n + 3 * index) % 24:02d}:00:00Z",
            "rotation_turn_length_seconds": turn,
        }
        if index == LAYERS - 1:
            layer["restrictions"] = [{"type": "daily_restriction", "start_time_of_day": "09:00:00",
                                      "duration_seconds": 8 * 3600}]  # fmt: skip
        layers.append(layer)
    zone = ("America/Chicago", "Europe/London", "Asia/Kolkata")[n % 3]
    return ScheduleRequest.model_validate(
        {"name": f"schedule {n:04d}", "time_zone": zone, "schedule_layers": layers}
    )


def populate(store: Store, owner: Caller, users: list[str]) -> list[str]:
    """The schedules (created as the API creates them) and the overrides (written as their
    items: the count, not the route, is what is measured)."""
    with ThreadPoolExecutor(WRITERS) as pool:
        ids = list(pool.map(
            lambda n: commands.create_schedule(store, owner, schedule_request(users, n)).id,
            range(SCHEDULES),
        ))  # fmt: skip
    items: list[Item] = []
    for n in range(OVERRIDES):
        schedule = ids[n % SCHEDULES]
        start = T0 + timedelta(hours=3 + 7 * (n // SCHEDULES))  # from the hour measured on
        override = Override(new_id("ovr"), start, start + timedelta(hours=5), users[n % USERS],
                            T0 - timedelta(days=1), sequence=1)  # fmt: skip
        items.append(override_item(owner.account_id, schedule, override))
    batches = [items[i : i + 25] for i in range(0, len(items), 25)]
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(lambda batch: _write(store, batch), batches))
    with ThreadPoolExecutor(WRITERS) as pool:  # the overrides now count: materialize again
        list(pool.map(lambda sid: _materialize(store, owner.account_id, sid), ids))
    return ids


def _write(store: Store, batch: list[Item]) -> None:
    pending: Any = {TABLE: [{"PutRequest": {"Item": item}} for item in batch]}
    while pending:
        pending = store.client.batch_write_item(RequestItems=pending).get("UnprocessedItems")


def _materialize(store: Store, account: str, schedule_id: str) -> None:
    schedule = read_schedule(store, account, schedule_id)
    known = known_at(schedule, overrides_reader(store, account, schedule_id), store.clock())
    store.transact_growing(lambda: _transaction(store, account, known))


def _transaction(store: Store, account: str, known: Known) -> Transaction[Failure, None]:
    return Transaction(now_writes(store, account, known), None)


def naive_now(store: Store, account: str, ids: list[str]) -> dict[str, str | None]:
    """Each schedule read and rendered at now: the answer without materialization."""
    at = store.clock()
    answer = {}
    for schedule_id in ids:
        schedule = read_schedule(store, account, schedule_id)
        overrides = overrides_between(store, account, schedule_id, at, at + timedelta(seconds=1))
        answer[schedule_id] = on_call_at(schedule.layers(), overrides, at)
    return answer


def measured(units: Units, operation: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    """`operation`'s result, and its median seconds over `RUNS`, requests and read units
    (of one run)."""
    seconds = []
    for _ in range(RUNS):
        before = (units.requests, units.read)
        started = time.perf_counter()
        result = operation()
        seconds.append(time.perf_counter() - started)
    return result, {
        "seconds": statistics.median(seconds),
        "requests": units.requests - before[0],
        "read_units": units.read - before[1],
    }


def item_floor(store: Store, account: str) -> float:
    """Read units of reading every materialized item once, strongly consistent: their bytes
    in 4 KB units, as a Query bills a page."""
    items = store.query_partition(teams_partition(account), prefix=oncalls_prefix())
    size = sum(item_size(item) for item in items)
    return max(1.0, -(-size // 4096))


@dataclass
class Metered:
    """`hand_off` one at a time, the units each used summed (the sweep's own reads apart)."""

    units: Units
    handoffs: int = 0
    read: float = 0.0
    written: int = 0
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, store: Store, timer: Timer) -> bool:
        with self.lock:
            before = (self.units.read, self.units.billed_small_writes(), self.units.requests)
            fired = hand_off(store, timer)
            self.handoffs += fired
            self.read += self.units.read - before[0]
            self.written += self.units.billed_small_writes() - before[1]
            self.requests += self.units.requests - before[2]
            return fired


def handoffs_for_an_hour(store: Store, units: Units) -> dict[str, Any]:
    """Every handoff due in the hour from T0, fired by the sweep each minute."""
    metered = Metered(units)
    handlers: dict[TimerKind, Fire] = {TimerKind.HANDOFF: metered}
    sweep(store, T0, FireHere(handlers))  # the marker
    before = units.read
    for minute in range(1, 61):
        at = T0 + timedelta(minutes=minute, seconds=30)
        store.clock = lambda at=at: at  # type: ignore[misc]
        sweep(store, at, FireHere(handlers))
    return {
        "handoffs": metered.handoffs,
        "read_units": metered.read,
        "write_units": metered.written,
        "requests": metered.requests,
        "sweep_read_units": units.read - before - metered.read,
    }


def main() -> None:
    """Measure on a fresh DynamoDB Local; print the table; save the JSON."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=32)
        create_table(client, TABLE_SCHEMA, TABLE)
        store = build_store(client, TABLE, b"bench-oncall-cursor-secret-32byte")
        store.clock = lambda: T0
        owner = Caller(new_id("acct"), new_id("user"))
        users = [owner.user_id] + [new_id("user") for _ in range(USERS - 1)]
        for user in users:
            save_profile(store, Caller(owner.account_id, user), SaveProfile(name="On-call"))
        started = time.perf_counter()
        ids = populate(store, owner, users)
        setup = time.perf_counter() - started
        units = Units(client)
        answer, now = measured(units, lambda: on_call(store, owner, OnCallFilter()))
        expected, naive = measured(units, lambda: naive_now(store, owner.account_id, ids))
        shown = {e.schedule.id: e.user.id for e in answer.oncalls}
        assert shown == {k: v for k, v in expected.items() if v is not None}, "now disagrees"
        far = T0 + timedelta(days=90)
        _, render = measured(units, lambda: commands.get_schedule(store, owner, ids[0], T0, far))
        floor = item_floor(store, owner.account_id)
        hour = handoffs_for_an_hour(store, units)
    figures = {
        "schedules": SCHEDULES,
        "overrides": OVERRIDES,
        "setup_seconds": setup,
        "engine": engine.description,
        "now": now,
        "naive": naive,
        "floor_read_units": floor,
        "render_90_days": render,
        "handoff_hour": hour,
    }
    with recording_tables():
        report(figures)
        save("oncall", figures)


def report(figures: dict[str, Any]) -> None:
    """The run's table and lines."""
    now, naive, floor, hour = (figures[k] for k in ("now", "naive", "floor_read_units",
                                                     "handoff_hour"))  # fmt: skip
    print(
        f"one account: {SCHEDULES:,} schedules x {LAYERS} layers x {USERS} users, "
        f"{OVERRIDES:,} overrides, on {figures['engine']} "
        f"(setup {figures['setup_seconds']:.0f} s)\n"
    )
    print("| who is on call now | requests | read units (floor, x) | median latency | vs naive |")
    print("|---|---|---|---|---|")
    for name, row in (("materialized (one Query)", now), ("naive (read and render each)", naive)):
        print(
            f"| {name} | {row['requests']:,.0f} | {row['read_units']:,.1f} "
            f"({floor:,.0f}, {row['read_units'] / floor:.1f}x) "
            f"| {row['seconds'] * 1000:,.0f} ms | {row['seconds'] / now['seconds']:.1f}x |"
        )
    render = figures["render_90_days"]
    print(
        f"\n90-day render of one schedule: {render['seconds'] * 1000:,.0f} ms, "
        f"{render['requests']:.0f} requests, {render['read_units']:.1f} read units\n"
    )
    handoffs = max(1, hour["handoffs"])
    print(
        f"handoffs in an hour: {hour['handoffs']:,}; per handoff "
        f"{hour['write_units'] / handoffs:.1f} write units (floor 1: the schedule's one item; "
        "a transaction bills its item, the timer, the version check and the handoff event "
        f"twice) and {hour['read_units'] / handoffs:.1f} read units (the schedule, its "
        "versions and overrides, and the item it moves); the sweep's own Queries of the due "
        "index: "
        f"{hour['sweep_read_units']:,.0f} read units an hour, whatever is due"
    )


if __name__ == "__main__":
    main()
