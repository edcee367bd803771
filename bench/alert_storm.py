"""An alert storm (issue 39), through the alerts handler in this process on AWS DynamoDB
Local, as ``POST /alerts`` serves it (the key's lookup, the account's quota, the alert):

1. **Storm**: 5,000 alerts paced over a minute by 16 senders, 4,950 on 10 hot keys and one
   on each of 50 quiet keys: incidents opened (exactly 60), alerts counted per key (exact),
   latency p50/p99, requests and write units an alert against the floor.
2. **Isolation**: one account sends 3x its quota (1,000 a minute here) for 20 s while a
   second account sends an alert a second: the second account's refusals (none) and its
   latency beside the storm against alone, in the same run.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.alert_storm
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.consumed import Units
from bench.report import recording_tables, save
from incidents.alerts.ingest import alert_count
from incidents.alerts.integrations import create_integration
from incidents.alerts.models import NewIntegration
from incidents.incident.queries import PageRequest, account_incidents
from incidents.models import State
from incidents.store import Caller, Store, new_id
from incidents.table import TABLE_SCHEMA
from lambdas.routes import ROUTES
from local.api_events import LocalLambdaContext, json_body, proxy_event
from local.clients import create_table
from local.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

ALERTS, SECONDS, SENDERS = 5_000, 60.0, 16
HOT_KEYS, QUIET_KEYS = 10, 50
FLOOR_WRITE_UNITS = 5
"""An alert that joins an open incident: the quota's write (1) and one transaction of two
items, its seen item and a counter shard's add (2 x 2: a transaction bills each item twice)."""
ISOLATION_QUOTA, ISOLATION_SECONDS = 1_000, 20.0
TABLE = "alert-storm"


def main() -> None:
    with local_engine(DYNAMODB_LOCAL) as engine:
        os.environ.update(
            {
                "TABLE_NAME": TABLE,
                "DYNAMODB_ENDPOINT": engine.endpoint,
                "CURSOR_SECRET": "bench-alert-storm-cursor-secret-0123456789",
                "POWERTOOLS_SERVICE_NAME": "incidents",
                "POWERTOOLS_METRICS_NAMESPACE": "IncidentsBench",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": "ERROR",
                "ALERTS_PER_MINUTE": str(ALERTS * 2),
            }
        )
        from lambdas import alerts, runtime  # noqa: PLC0415 - reads the environment set above

        create_table(runtime.dynamodb(), TABLE_SCHEMA, TABLE)
        units = Units(runtime.dynamodb())
        send = _sender(alerts.handler)
        results = {
            "storm": storm(runtime.store(), send, units),
            "isolation": isolation(runtime.store(), send),
            "engine": engine.description,
        }
    report(results)


Send = Callable[[str, dict[str, Any]], tuple[int, float]]


def _sender(handler: Callable[[dict[str, Any], Any], dict[str, Any]]) -> Send:
    route = ROUTES["send_alert"]

    def send(key: str, body: dict[str, Any]) -> tuple[int, float]:
        event = proxy_event(route, headers={"Authorization": f"Bearer {key}"}, body=json_body(body))
        started = time.perf_counter()
        status = int(handler(event, LocalLambdaContext())["statusCode"])
        return status, (time.perf_counter() - started) * 1000

    return send


def storm(store: Store, send: Send, units: Units) -> dict[str, Any]:
    """5,000 alerts paced over a minute; what they opened, counted and cost."""
    caller, key = _account(store)
    keys = [f"hot-{n % HOT_KEYS}" for n in range(ALERTS - QUIET_KEYS)]
    for n in range(QUIET_KEYS):  # spread over the minute
        keys.insert(n * (ALERTS // QUIET_KEYS), f"quiet-{n}")
    sent = Counter(keys)
    before = (units.requests, units.write)
    statuses, latencies, elapsed = _paced(send, key, keys, SECONDS)
    requests, write_units = units.requests - before[0], units.write - before[1]
    incidents = _open_incidents(store, caller)
    counts = {incident: alert_count(store, caller.account_id, incident) for incident in incidents}
    return {
        "alerts": len(keys),
        "statuses": dict(Counter(statuses)),
        "seconds": round(elapsed, 1),
        "incidents": len(incidents),
        "counts_exact": sorted(counts.values()) == sorted(sent.values()),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(_percentile(latencies, 99), 1),
        "requests_per_alert": round(requests / len(keys), 2),
        "write_units_per_alert": round(write_units / len(keys), 2),
        "floor": FLOOR_WRITE_UNITS,
    }


def isolation(store: Store, send: Send) -> dict[str, Any]:
    """One account at 3x its quota beside another at an alert a second."""
    os.environ["ALERTS_PER_MINUTE"] = str(ISOLATION_QUOTA)
    _, stormy = _account(store)
    _, quiet = _account(store)
    count = int(ISOLATION_SECONDS)
    alone = [send(quiet, _trigger(f"alone-{n}"))[1] for n in range(count)]
    storm_keys = [f"k{n % 20}" for n in range(int(ISOLATION_QUOTA / 60 * ISOLATION_SECONDS * 3))]
    storm_statuses: list[int] = []

    def storming() -> None:
        storm_statuses.extend(_paced(send, stormy, storm_keys, ISOLATION_SECONDS)[0])

    thread = threading.Thread(target=storming)
    thread.start()
    beside = []
    quiet_statuses: Counter[int] = Counter()
    for n in range(count):
        status, took = send(quiet, _trigger(f"beside-{n}"))
        quiet_statuses[status] += 1
        beside.append(took)
        time.sleep(max(0.0, 1.0 - took / 1000))
    thread.join()
    return {
        "quota": ISOLATION_QUOTA,
        "storm_sent": len(storm_keys),
        "storm_statuses": dict(Counter(storm_statuses)),
        "quiet_statuses": dict(quiet_statuses),
        "quiet_alone_p50_ms": round(statistics.median(alone), 1),
        "quiet_beside_p50_ms": round(statistics.median(beside), 1),
        "quiet_alone_max_ms": round(max(alone), 1),
        "quiet_beside_max_ms": round(max(beside), 1),
    }


def _paced(
    send: Send, key: str, keys: list[str], seconds: float
) -> tuple[list[int], list[float], float]:
    """Each alert of `keys` sent at its moment of an even spread over `seconds`, by
    `SENDERS` threads; the statuses, the latencies and the seconds it took."""
    start = time.perf_counter()
    gap = seconds / len(keys)

    def one(index: int) -> tuple[int, float]:
        time.sleep(max(0.0, start + index * gap - time.perf_counter()))
        body = _trigger(keys[index], f"alert {index} of {keys[index]}")
        return send(key, body)

    with ThreadPoolExecutor(SENDERS) as pool:
        answers = list(pool.map(one, range(len(keys))))
    elapsed = time.perf_counter() - start
    return [status for status, _ in answers], [took for _, took in answers], elapsed


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
            "| write units/alert (floor) |"
        )
        print("|---:|---|---:|---:|---:|---:|---:|")
        print(
            f"| {storm_['incidents']} | {storm_['counts_exact']} "
            f"| {storm_['statuses'].get(202, 0)} | {storm_['p50_ms']} ms | {storm_['p99_ms']} ms "
            f"| {storm_['requests_per_alert']} | {storm_['write_units_per_alert']} "
            f"({storm_['floor']}) |"
        )
        print()
        print(
            f"One account at 3x its quota ({alone['quota']:,} a minute) for "
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
