"""Racing alerts on one key, through the alerts handler as ``POST /alerts`` serves it, on
AWS DynamoDB Local: 100 sender processes (one handler each, as Lambda runs one request a
container) fire 50 triggers, 25 acknowledges and 25 resolves of one ``dedup_key`` at the
same instant, round after round (20 rounds).

What it checks, against the table afterwards: every answer a 202 (the Events API has no
409, and a resolve that loses a race retries until it has moved the incident); every
trigger counted once on the incident it opened or joined; at most one open incident of the
key after each round; and each incident's timeline in the order its writes committed (``seq``
1, 2, 3... with no gap, versions and times never going back, each status change starting
from the status the one before it left, nothing after ``incident.resolved``).

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.alert_races
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import statistics
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from bench.support.handler_environment import handler_environment
from bench.support.report import recording_tables, save
from incidents.alerts import ingest
from incidents.alerts.ingest import alert_count
from incidents.alerts.integrations import create_integration
from incidents.alerts.models import NewIntegration
from incidents.incident.commands import load_summary
from incidents.models import EventType, Status, TimelineEvent
from incidents.paging import PageRequest
from incidents.store import Caller, Store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.timeline.queries import EventRequest, incident_timeline
from lambdas.routes import ROUTES
from local.api.proxy_events import LocalLambdaContext, json_body, proxy_event
from local.engines.clients import create_table, use_local_credentials
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

RACERS, ROUNDS = 100, 20
KINDS = ["trigger"] * (RACERS // 2) + ["acknowledge", "resolve"] * (RACERS // 4)
"""One round's alerts: half triggers, a quarter each acknowledges and resolves."""
KEY = "racing"
TABLE = "alert-races"
LOCAL_BUDGET_SECONDS = 120.0
BUDGETS = (ingest.ALERT_SECONDS, LOCAL_BUDGET_SECONDS)
"""The alert's time to settle: the shipped budget (past it, a 429 the sender retries), then
one sized for the local engine (DynamoDB Local on two cores serves a contended key far
slower than DynamoDB: the run then shows what lands, not the budget)."""
WARM_UP_ROUNDS = 2
"""Rounds on another key first, so every container has served an alert (a cold one's first
pays for its imports and model builds, which is the cold-start bench's subject)."""
START_SECONDS = 2.0
"""How far ahead a round's instant is set, so every sender is waiting for it."""


def main() -> None:
    use_local_credentials()
    with local_engine(DYNAMODB_LOCAL) as engine:
        environment = handler_environment(
            TABLE,
            engine.endpoint,
            ALERTS_PER_MINUTE=str(RACERS * ROUNDS * 2),
            INTEGRATION_ALERTS_PER_MINUTE=str(RACERS * ROUNDS * 2),
        )
        os.environ.update(environment)
        from lambdas import runtime  # noqa: PLC0415 - reads the environment set above

        create_table(runtime.dynamodb(), TABLE_SCHEMA, TABLE)
        store = runtime.store()
        spawn = multiprocessing.get_context("spawn")  # forked, they would share our sockets
        with ProcessPoolExecutor(
            RACERS, mp_context=spawn, initializer=_container, initargs=(environment,)
        ) as pool:
            list(pool.map(_warm, range(RACERS * 2)))  # every container started
            warm_up = Caller(new_id("acct"), new_id("user"))
            warm_key = create_integration(store, warm_up, NewIntegration(name="warm")).key
            race(store, warm_up, warm_key, pool, LOCAL_BUDGET_SECONDS, rounds=WARM_UP_ROUNDS)
            runs = []
            for budget in BUDGETS:
                caller = Caller(new_id("acct"), new_id("user"))
                key = create_integration(store, caller, NewIntegration(name="racing")).key
                runs.append(race(store, caller, key, pool, budget))
    report({"runs": runs, "engine": engine.description})


@dataclass(frozen=True)
class Answer:
    """One alert's HTTP answer and latency."""

    kind: str
    status: int
    outcome: str
    incident_id: str | None
    ms: float


_CONTAINER: dict[str, Any] = {}


def _container(environment: dict[str, str]) -> None:
    os.environ.update(environment)
    from lambdas import alerts  # noqa: PLC0415 - reads the environment set above

    _CONTAINER["handler"] = alerts.handler


def _warm(_: int) -> None:
    time.sleep(0.05)  # each process takes one, so the pool starts them all


def _send(job: tuple[float, str, str, int, int, float]) -> Answer:
    """One alert of `kind` at the instant `at` (the monotonic clock, shared by processes),
    within a budget of `budget` seconds; each trigger its own alert (same words, other
    details), as a storm's are."""
    at, key, kind, round_number, n, budget = job
    ingest.ALERT_SECONDS = budget
    body: dict[str, Any] = {"event_action": kind, "dedup_key": KEY}
    if kind == "trigger":
        body["payload"] = {
            "summary": "racing",
            "source": "bench",
            "severity": "info",
            "custom_details": {"round": round_number, "n": n},
        }
    event = proxy_event(
        ROUTES["send_alert"], headers={"Authorization": f"Bearer {key}"}, body=json_body(body)
    )
    time.sleep(max(0.0, at - time.monotonic()))
    started = time.perf_counter()
    response = _CONTAINER["handler"](event, LocalLambdaContext())
    took = (time.perf_counter() - started) * 1000
    answer = json.loads(response["body"])
    status = int(response["statusCode"])
    outcome = answer.get("status", answer.get("code", "?"))
    return Answer(kind, status, outcome, answer.get("incident_id"), took)


def race(
    store: Store,
    caller: Caller,
    key: str,
    pool: ProcessPoolExecutor,
    budget: float,
    *,
    rounds: int = ROUNDS,
) -> dict[str, Any]:
    """`rounds` rounds of `RACERS` alerts at once, each with `budget` seconds to settle;
    what they answered and left."""
    answers: list[Answer] = []
    open_after_round: list[int] = []
    for round_number in range(rounds):
        at = time.monotonic() + START_SECONDS
        jobs = [(at, key, kind, round_number, n, budget) for n, kind in enumerate(KINDS)]
        answers += list(pool.map(_send, jobs, chunksize=1))
        seen = {a.incident_id for a in answers if a.incident_id}
        open_after_round.append(
            sum(load_summary(store, caller, i).status is not Status.RESOLVED for i in seen)
        )
    triggers = [a for a in answers if a.kind == "trigger"]
    incidents = sorted({a.incident_id for a in answers if a.incident_id})
    counted = sum(alert_count(store, caller.account_id, i) for i in incidents)
    broken = [i for i in incidents if not _in_commit_order(_timeline(store, caller, i))]
    return {
        "budget_seconds": budget,
        "racers": RACERS,
        "rounds": ROUNDS,
        "alerts": len(answers),
        "statuses": dict(Counter(a.status for a in answers)),
        "outcomes": {
            kind: dict(Counter(a.outcome for a in answers if a.kind == kind))
            for kind in ("trigger", "acknowledge", "resolve")
        },
        "incidents": len(incidents),
        "triggers": len(triggers),
        "counted": counted,
        "counts_exact": counted == len(triggers),
        "most_open_after_a_round": max(open_after_round),
        "timelines_out_of_order": len(broken),
        "p50_ms": round(statistics.median(a.ms for a in answers), 1),
        "p99_ms": round(sorted(a.ms for a in answers)[int(len(answers) * 0.99)], 1),
        "max_ms": round(max(a.ms for a in answers), 1),
    }


def _timeline(store: Store, caller: Caller, incident_id: str) -> list[TimelineEvent]:
    events: list[TimelineEvent] = []
    cursor = None
    while True:
        page = incident_timeline(
            store, caller, incident_id, EventRequest(PageRequest(100, cursor, descending=False))
        )
        events += page.items
        if not page.has_more:
            return events
        cursor = page.next_cursor


def _in_commit_order(events: list[TimelineEvent]) -> bool:
    """``seq`` 1, 2, 3... with no gap; versions and times never back; each status change
    from the status the one before left; nothing after the incident resolved."""
    if [e.seq for e in events] != list(range(1, len(events) + 1)):
        return False
    if any(b.version < a.version or b.at < a.at for a, b in itertools.pairwise(events)):
        return False
    status = Status.TRIGGERED
    for event in events[1:]:
        if status is Status.RESOLVED:
            return False
        change = getattr(event, "changes", None)
        if change is not None and change.status is not None:
            if change.status.from_ is not status:
                return False
            status = change.status.to
    return events[0].type is EventType.CREATED


def report(results: dict[str, Any]) -> None:
    with recording_tables():
        print(
            f"{ROUNDS} rounds of {RACERS} alerts of one key at once (50 triggers, 25 "
            f"acknowledges, 25 resolves) by {RACERS} sender processes, {results['engine']}:"
        )
        print()
        print(
            "| budget | alerts | 202 | other | incidents | triggers counted "
            "| most open after a round | timelines out of order | p50 | p99 | max |"
        )
        print("|---:|---:|---:|---|---:|---|---:|---:|---:|---:|---:|")
        for run in results["runs"]:
            statuses = run["statuses"]
            other = ", ".join(f"{n} {s}" for s, n in statuses.items() if s != 202) or "none"
            print(
                f"| {run['budget_seconds']:.0f} s | {run['alerts']:,} | {statuses.get(202, 0):,} "
                f"| {other} | {run['incidents']} | {run['counted']:,} of {run['triggers']:,} "
                f"| {run['most_open_after_a_round']} | {run['timelines_out_of_order']} "
                f"| {run['p50_ms']} ms | {run['p99_ms']} ms | {run['max_ms']} ms |"
            )
        print()
        print("| budget | trigger | acknowledge | resolve |")
        print("|---:|---|---|---|")
        for run in results["runs"]:
            said = [
                ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items()))
                for outcomes in run["outcomes"].values()
            ]
            print(f"| {run['budget_seconds']:.0f} s | {' | '.join(said)} |")
        print(f"written to {save('alert_races', json.loads(json.dumps(results, default=str)))}")


if __name__ == "__main__":
    main()
