"""An alert storm (issue 39), through the alerts handler in this process on AWS DynamoDB
Local, as ``POST /alerts`` serves it (the key's lookup, the account's quota, the alert):

1. **Storm**: 5,000 alerts paced over a minute by 16 sender processes (one handler each, as
   Lambda runs one request a container), 4,950 on 10 hot keys and one
   on each of 50 quiet keys: incidents opened (exactly 60), alerts counted per key (exact),
   latency p50/p99, requests and write units an alert against the floor.
2. **Isolation**: one account sends 3x its quota's worth (300 a minute here: 900 alerts)
   in 20 s while a
   second account sends an alert a second: the second account's refusals (none) and its
   latency beside the storm against alone, in the same run.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.alert_storm
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from bench.support.consumed import Units
from bench.support.handler_environment import handler_environment
from bench.support.report import recording_tables, save
from incidents.alerts.ingest import alert_count
from incidents.alerts.integrations import create_integration
from incidents.alerts.models import NewIntegration
from incidents.incident.queries import account_incidents
from incidents.models import State
from incidents.paging import PageRequest
from incidents.store import Caller, Store, new_id
from incidents.table import TABLE_SCHEMA
from lambdas.routes import ROUTES
from local.api.proxy_events import LocalLambdaContext, json_body, proxy_event
from local.engines.clients import create_table, use_local_credentials
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

ALERTS, SECONDS, SENDERS = 5_000, 60.0, 16
HOT_KEYS, QUIET_KEYS = 10, 50
FLOOR_WRITE_UNITS = 6
"""An alert that joins an open incident: the two quotas' writes (its key's and its
account's, 1 each) and one transaction of two items, its seen item and a counter shard's add
(2 x 2: a transaction bills each item twice)."""
ISOLATION_QUOTA, ISOLATION_SECONDS = 300, 20.0
TABLE = "alert-storm"


def main() -> None:
    use_local_credentials()
    with local_engine(DYNAMODB_LOCAL) as engine:
        environment = handler_environment(
            TABLE,
            engine.endpoint,
            ALERTS_PER_MINUTE=str(ALERTS * 2),
            INTEGRATION_ALERTS_PER_MINUTE=str(ALERTS * 2),
        )
        os.environ.update(environment)
        from lambdas import runtime  # noqa: PLC0415 - reads the environment set above

        create_table(runtime.dynamodb(), TABLE_SCHEMA, TABLE)
        spawn = multiprocessing.get_context("spawn")  # forked, they would share our sockets
        with ProcessPoolExecutor(
            SENDERS, mp_context=spawn, initializer=_container, initargs=(environment,)
        ) as pool:
            results = {
                "storm": storm(runtime.store(), pool),
                "isolation": isolation(runtime.store(), pool, environment),
                "engine": engine.description,
            }
    report(results)


@dataclass(frozen=True)
class Sent:
    """One alert's answer, its latency and what its handler asked of DynamoDB."""

    status: int
    ms: float
    requests: int
    local_write_units: float
    billed_write_units: int


_CONTAINER: dict[str, Any] = {}
"""This sender process's handler and units: one process a container, as Lambda runs them
(a resolver serves one request at a time; threads sharing one would mix requests)."""


def _container(environment: dict[str, str]) -> None:
    os.environ.update(environment)
    from lambdas import alerts, runtime  # noqa: PLC0415 - read the environment set above
    from lambdas.http import quotas  # noqa: PLC0415

    quotas.quotas.cache_clear()
    _CONTAINER.update(handler=alerts.handler, units=Units(runtime.dynamodb()), quotas=quotas.quotas)


def _send(job: tuple[float, str, dict[str, Any], str | None]) -> Sent:
    """One alert at its moment (`at`, on the monotonic clock), with `quota` if given."""
    at, key, body, quota = job
    if quota is not None and os.environ["ALERTS_PER_MINUTE"] != quota:
        os.environ["ALERTS_PER_MINUTE"] = quota
        _CONTAINER["quotas"].cache_clear()
    time.sleep(max(0.0, at - time.monotonic()))
    units: Units = _CONTAINER["units"]
    before = (units.requests, units.write, units.billed_small_writes())
    event = proxy_event(
        ROUTES["send_alert"], headers={"Authorization": f"Bearer {key}"}, body=json_body(body)
    )
    started = time.perf_counter()
    status = int(_CONTAINER["handler"](event, LocalLambdaContext())["statusCode"])
    took = (time.perf_counter() - started) * 1000
    return Sent(
        status,
        took,
        units.requests - before[0],
        units.write - before[1],
        units.billed_small_writes() - before[2],
    )


def storm(store: Store, pool: ProcessPoolExecutor) -> dict[str, Any]:
    """5,000 alerts paced over a minute; what they opened, counted and cost."""
    caller, key = _account(store)
    keys = [f"hot-{n % HOT_KEYS}" for n in range(ALERTS - QUIET_KEYS)]
    for n in range(QUIET_KEYS):  # spread over the minute
        keys.insert(n * (ALERTS // QUIET_KEYS), f"quiet-{n}")
    sent = Counter(keys)
    answers, elapsed = _paced(pool, key, keys, SECONDS)
    incidents = _open_incidents(store, caller)
    counts = {incident: alert_count(store, caller.account_id, incident) for incident in incidents}
    latencies = [answer.ms for answer in answers]
    return {
        "alerts": len(keys),
        "statuses": dict(Counter(answer.status for answer in answers)),
        "seconds": round(elapsed, 1),
        "incidents": len(incidents),
        "counts_exact": sorted(counts.values()) == sorted(sent.values()),
        "counted": sum(counts.values()),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(_percentile(latencies, 99), 1),
        "requests_per_alert": round(sum(a.requests for a in answers) / len(keys), 2),
        "write_units_per_alert": round(sum(a.local_write_units for a in answers) / len(keys), 2),
        "billed_write_units_per_alert": round(
            sum(a.billed_write_units for a in answers) / len(keys), 2
        ),
        "floor": FLOOR_WRITE_UNITS,
    }


def isolation(
    store: Store, pool: ProcessPoolExecutor, environment: dict[str, str]
) -> dict[str, Any]:
    """One account sending 3x its quota's worth beside another at an alert a second."""
    _container({**environment, "ALERTS_PER_MINUTE": str(ISOLATION_QUOTA)})  # the quiet one's
    _, stormy = _account(store)
    _, quiet = _account(store)
    count = int(ISOLATION_SECONDS)
    alone = [_send((0.0, quiet, _trigger(f"alone-{n}"), None)).ms for n in range(count)]
    storm_keys = [f"k{n % 20}" for n in range(ISOLATION_QUOTA * 3)]
    stormed: list[Sent] = []
    thread = threading.Thread(
        target=lambda: stormed.extend(
            _paced(pool, stormy, storm_keys, ISOLATION_SECONDS, str(ISOLATION_QUOTA))[0]
        )
    )
    thread.start()
    beside: list[Sent] = []
    for n in range(count):
        beside.append(_send((0.0, quiet, _trigger(f"beside-{n}"), None)))
        time.sleep(max(0.0, 1.0 - beside[-1].ms / 1000))
    thread.join()
    return {
        "quota": ISOLATION_QUOTA,
        "storm_sent": len(storm_keys),
        "storm_statuses": dict(Counter(answer.status for answer in stormed)),
        "quiet_statuses": dict(Counter(answer.status for answer in beside)),
        "quiet_alone_p50_ms": round(statistics.median(alone), 1),
        "quiet_beside_p50_ms": round(statistics.median(a.ms for a in beside), 1),
        "quiet_alone_max_ms": round(max(alone), 1),
        "quiet_beside_max_ms": round(max(a.ms for a in beside), 1),
    }


def _paced(
    pool: ProcessPoolExecutor, key: str, keys: list[str], seconds: float, quota: str | None = None
) -> tuple[list[Sent], float]:
    """Each alert of `keys` sent at its moment of an even spread over `seconds` by the
    sender processes; their answers and the seconds it took."""
    start, gap = time.monotonic() + 1.0, seconds / len(keys)
    jobs = [
        (start + index * gap, key, _trigger(name, f"alert {index} of {name}"), quota)
        for index, name in enumerate(keys)
    ]
    answers = list(pool.map(_send, jobs, chunksize=1))
    return answers, time.monotonic() - start


def _trigger(dedup_key: str, summary: str = "disk full") -> dict[str, Any]:
    payload = {"summary": summary, "source": "bench", "severity": "warning"}
    return {"event_action": "trigger", "dedup_key": dedup_key, "payload": payload}


def _account(store: Store) -> tuple[Caller, str]:
    caller = Caller(new_id("acct"), new_id("user"))
    return caller, create_integration(store, caller, NewIntegration(name="bench")).key


def _open_incidents(store: Store, caller: Caller) -> list[str]:
    found: list[str] = []
    cursor = None
    while True:
        page = account_incidents(store, caller, State.OPEN, PageRequest(100, cursor))
        found += [summary.id for summary in page.items]
        if not page.has_more:
            return found
        cursor = page.next_cursor


def _percentile(values: list[float], percent: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * percent / 100))]


def report(results: dict[str, Any]) -> None:
    storm_, alone = results["storm"], results["isolation"]
    with recording_tables():
        print(
            f"{storm_['alerts']:,} alerts in {storm_['seconds']} s by {SENDERS} senders "
            f"({HOT_KEYS} hot keys, {QUIET_KEYS} quiet ones), {results['engine']}:"
        )
        print()
        print(
            "| incidents | counts exact | 202s | p50 | p99 | requests/alert "
            "| write units/alert: Local's | DynamoDB's rules (floor) |"
        )
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        print(
            f"| {storm_['incidents']} | {storm_['counts_exact']} "
            f"| {storm_['statuses'].get(202, 0)} | {storm_['p50_ms']} ms | {storm_['p99_ms']} ms "
            f"| {storm_['requests_per_alert']} | {storm_['write_units_per_alert']} "
            f"| {storm_['billed_write_units_per_alert']} ({storm_['floor']}) |"
        )
        print()
        print(
            f"One account sending 3x its quota ({alone['quota']:,} a minute) in "
            f"{ISOLATION_SECONDS:.0f} s beside another sending an alert a second:"
        )
        print()
        print("| account | sent | 202 | 429 | p50 alone | p50 beside | max alone | max beside |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        s, q = alone["storm_statuses"], alone["quiet_statuses"]
        print(f"| storming | {alone['storm_sent']} | {s.get(202, 0)} | {s.get(429, 0)} | | | | |")
        print(
            f"| quiet | {int(ISOLATION_SECONDS)} | {q.get(202, 0)} | {q.get(429, 0)} "
            f"| {alone['quiet_alone_p50_ms']} ms | {alone['quiet_beside_p50_ms']} ms "
            f"| {alone['quiet_alone_max_ms']} ms | {alone['quiet_beside_max_ms']} ms |"
        )
        print(f"written to {save('alert_storm', json.loads(json.dumps(results, default=str)))}")


if __name__ == "__main__":
    main()
