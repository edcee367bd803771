"""Load test with invariants: `make load` (not part of `make test`).

Reproduce: ``make load`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.load``).
Settings: ``LOAD_CLIENTS`` (16), ``LOAD_SECONDS`` (60), ``LOAD_INCIDENTS`` (demo incidents
seeded first, 300), ``LOAD_SEED`` (7). It starts AWS DynamoDB Local, then ``make dev``'s
server on it (a child process, as a user runs it), twice in the same run: with one worker
process, then with ``make dev``'s default concurrency (the cores, at least 2), each on a
table of its own. Each time it runs the clients for a bounded time:
creates (a third retried with the same ``Idempotency-Key``), updates with and without
``If-Match`` (never to RESOLVED, so the CLOSED lists do not move), participant adds and
removes, team membership changes, and list walks to the end with random page sizes.

Then it checks, reading the table itself: every participation copy equals its summary at
its version; incident numbers are unique per account; every acknowledged create exists
exactly once (a retried key answered the same incident); no response was a 5xx; every walk
was strictly ordered without a repeat, every CLOSED walk of the account equals the table,
and every OPEN walk contains each incident that was acknowledged before it began. It prints
throughput, p50/p99 per route, the invariants and the peak RSS of the largest server process
and the JVM for each run, then the ratio of the two runs' requests/s and p99, and exits 1
if an invariant fails.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.support.report import save
from incidents.items import from_item, participation_from_item
from incidents.models import IncidentSummary
from local.api.dev_process import DevProcess, dev_process, peak_rss_mb
from local.api.server import default_concurrency
from local.engines.clients import local_client
from local.engines.dynamodb_local import running_jvms
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

TABLE = "incidents-load"
WALKS = [
    "/incidents?state=CLOSED",
    "/incidents?state=OPEN",
    "/me/incidents?state=CLOSED",
    "/me/teams/incidents?state=CLOSED",
]
Answer = tuple[int, Any]


@dataclass
class Record:
    """What the clients saw, shared between their threads (one lock)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    created: dict[str, tuple[str, float, str]] = field(default_factory=dict)
    """Idempotency-Key -> (incident id, when the 201 came back, account)."""
    problems: list[str] = field(default_factory=list)
    walks: Counter[str] = field(default_factory=Counter)
    restarts: int = 0

    def note(self, route: str, status: int, seconds: float) -> None:
        with self.lock:
            self.latencies[route].append(seconds)
            self.statuses[(route, status)] += 1

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)


@dataclass
class Client:
    """One simulated user: a dev token, their account's users and teams, their incidents."""

    url: str
    token: str
    account: str
    user_id: str
    users: list[str]
    teams: list[str]
    record: Record
    rng: random.Random
    incidents: dict[str, int] = field(default_factory=dict)
    """Incident id -> last version this client saw."""

    def call(self, route: str, method: str, path: str, body: Any = None, **headers: str) -> Answer:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": self.token, "Content-Type": "application/json", **headers},
        )
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        self.record.note(route, status, time.perf_counter() - started)
        if status >= 500:
            self.record.problem(f"{method} {path}: {status} {text[:200]!r}")
        return status, json.loads(text) if text else None

    def create(self, ground: Ground) -> None:
        key = uuid.uuid4().hex
        body = {
            "title": f"load {key[:8]}",
            "teams": self.rng.sample(self.teams, self.rng.randint(0, min(2, len(self.teams)))),
            "assignees": self.rng.sample(self.users, self.rng.randint(0, 2)),
        }
        tries = 2 if self.rng.random() < 1 / 3 else 1
        ids = set()
        for _ in range(tries):
            status, answer = self.call("POST /incidents", "POST", "/incidents", body,
                                       **{"Idempotency-Key": key})  # fmt: skip
            if status == 201:
                ids.add(answer["summary"]["id"])
        if len(ids) > 1:
            self.record.problem(f"Idempotency-Key {key} answered {sorted(ids)}")
        if ids:
            (incident,) = ids
            self.incidents[incident] = 1
            with self.record.lock:
                self.record.created[key] = (incident, time.monotonic(), self.account)

    def update(self, _: Ground) -> None:
        if not self.incidents:
            return
        incident = self.rng.choice(list(self.incidents))
        body = {"severity": self.rng.choice(["SEV1", "SEV2", "SEV3"]), "status": "ACKNOWLEDGED"}
        headers = {"If-Match": str(self.incidents[incident])} if self.rng.random() < 0.5 else {}
        route = "PATCH /incidents/{id}" + (" If-Match" if headers else "")
        status, answer = self.call(route, "PATCH", f"/incidents/{incident}", body, **headers)
        if status == 200:
            self.incidents[incident] = answer["version"]

    def participants(self, _: Ground) -> None:
        if not self.incidents:
            return
        incident, user = self.rng.choice(list(self.incidents)), self.rng.choice(self.users)
        if self.rng.random() < 0.6:
            body = {"participant_id": user, "role": "responder"}
            self.call("POST participants", "POST", f"/incidents/{incident}/participants", body)
        elif user != self.user_id:
            self.call("DELETE participant", "DELETE", f"/incidents/{incident}/participants/{user}")

    def membership(self, _: Ground) -> None:
        team, user = self.rng.choice(self.teams), self.rng.choice(self.users)
        if user == self.user_id:
            return
        if self.rng.random() < 0.5:
            self.call("POST members", "POST", f"/teams/{team}/members", {"user_id": user})
        else:
            self.call("DELETE member", "DELETE", f"/teams/{team}/members/{user}")

    def walk(self, ground: Ground) -> None:
        path = self.rng.choice(WALKS)
        began = time.monotonic()
        seen: list[dict[str, Any]] = []
        cursor = ""
        while True:
            limit = self.rng.randint(1, 100)
            status, page = self.call(f"GET {path} (walk)", "GET", f"{path}&limit={limit}{cursor}")
            if status == 400 and page["code"] == "invalid_cursor" and "/me/teams" in path:
                with self.record.lock:  # my memberships changed mid-walk: start again
                    self.record.restarts += 1
                return
            if status != 200:
                return
            seen += page["items"]
            if not page["has_more"]:
                break
            cursor = f"&cursor={page['next_cursor']}"
        ground.check_walk(self, path, seen, began)


@dataclass
class Ground:
    """The truth walks are checked against: the CLOSED incidents per account (no load
    operation closes or reopens one) and the seeded OPEN ones."""

    closed: dict[str, list[str]]
    open_at_start: dict[str, set[str]]
    record: Record

    def check_walk(
        self, client: Client, path: str, seen: list[dict[str, Any]], began: float
    ) -> None:
        ids = [item["id"] for item in seen]
        keys = [(item["created_at"], item["id"]) for item in seen]
        account = client.account
        problems = []
        if len(set(ids)) != len(ids):
            problems.append("a repeat")
        if keys != sorted(keys, reverse=True):
            problems.append("out of order")
        if path == "/incidents?state=CLOSED" and ids != self.closed[account]:
            problems.append(f"{len(ids)} items, the table has {len(self.closed[account])}")
        if path == "/incidents?state=OPEN":
            with self.record.lock:
                acknowledged = {
                    i
                    for i, at, owner in self.record.created.values()
                    if at < began and owner == account
                }
            if missing := (self.open_at_start[account] | acknowledged) - set(ids):
                problems.append(f"gap: {len(missing)} acknowledged incidents missing")
        with self.record.lock:
            self.record.walks[path] += 1
        for problem in problems:
            self.record.problem(f"walk {path} as {client.user_id}: {problem}")


def scan(endpoint: str, table: str) -> list[dict[str, Any]]:
    """Every item of the load table (strongly consistent)."""
    client = local_client(endpoint)
    pages = client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
    return [item for page in pages for item in page["Items"]]


def summaries(items: list[dict[str, Any]]) -> dict[str, tuple[str, IncidentSummary]]:
    """Incident id -> (account, summary), from the table's summary items."""
    found = {}
    for item in items:
        if item.get("Type", {}).get("S") == "incident":
            summary = from_item(IncidentSummary, item)
            found[summary.id] = (item["PK"]["S"].split("#", 1)[0], summary)
    return found


def ground_truth(endpoint: str, table: str, record: Record) -> Ground:
    """CLOSED lists and OPEN sets per account, from the table, before the load starts."""
    by_account: dict[str, list[IncidentSummary]] = defaultdict(list)
    for account, summary in summaries(scan(endpoint, table)).values():
        by_account[account].append(summary)
    order = lambda s: (s.created_at, s.id)  # noqa: E731
    return Ground(
        closed={
            a: [s.id for s in sorted(group, key=order, reverse=True) if s.state == "CLOSED"]
            for a, group in by_account.items()
        },
        open_at_start={
            a: {s.id for s in group if s.state == "OPEN"} for a, group in by_account.items()
        },
        record=record,
    )


def clients(running: DevProcess, record: Record, count: int, seed: int) -> list[Client]:
    """`count` users, spread over both demo accounts."""
    pool = [(account, user) for account in running.accounts for user in account["users"]]
    made = []
    for n in range(count):
        account, user = pool[n % len(pool)]
        teams = [t for t, members in account["teams"].items() if user["user_id"] in members]
        made.append(
            Client(
                url=running.url,
                token=user["token"],
                account=account["account_id"],
                user_id=user["user_id"],
                users=[u["user_id"] for u in account["users"]],
                teams=teams or list(account["teams"]),
                record=record,
                rng=random.Random(seed * 1000 + n),
            )
        )
    return made


def drive(client: Client, ground: Ground, until: float) -> None:
    """One client's loop: a weighted mix of operations until `until`."""
    operations: list[tuple[Callable[[Ground], None], int]] = [
        (client.create, 30), (client.update, 20), (client.participants, 15),
        (client.membership, 10), (client.walk, 25),
    ]  # fmt: skip
    actions, weights = zip(*operations, strict=True)
    while time.monotonic() < until:
        client.rng.choices(actions, weights)[0](ground)


def invariants(endpoint: str, table: str, record: Record) -> dict[str, bool]:
    """The checks after the load, on the table itself."""
    items = scan(endpoint, table)
    found = summaries(items)
    copies_ok = all(
        (copy := participation_from_item(item)).incident == found[copy.incident.id][1]
        for item in items
        if item.get("Type", {}).get("S") == "participation"
    )
    numbers = Counter((account, s.number) for account, s in found.values())
    titles = Counter(s.title for _, s in found.values())
    return {
        "every participation copy equals its summary at its version": copies_ok,
        "incident numbers are unique per account": max(numbers.values()) == 1,
        "every acknowledged create exists exactly once": all(
            incident in found and titles[f"load {key[:8]}"] == 1
            for key, (incident, _, _) in record.created.items()
        ),
        "no response was a 5xx": not any(s >= 500 for _, s in record.statuses),
        "every walk: ordered, no repeat, no gap": not any("walk" in p for p in record.problems),
        "every Idempotency-Key answered one incident": not any(
            "Idempotency-Key" in p for p in record.problems
        ),
    }


def main() -> None:
    """The load with one worker, then with `make dev`'s default concurrency, on one engine;
    print both and their ratio, exit 1 if an invariant fails in either."""
    count = int(os.environ.get("LOAD_CLIENTS", "16"))
    seconds = float(os.environ.get("LOAD_SECONDS", "60"))
    seed = int(os.environ.get("LOAD_SEED", "7"))
    runs: dict[int, dict[str, Any]] = {}
    with local_engine(DYNAMODB_LOCAL) as engine:
        for workers in (1, default_concurrency()):
            runs[workers] = one_run(engine.endpoint, workers, count, seconds, seed)
    single, default = runs[1], runs[max(runs)]
    print(
        f"\n{max(runs)} workers against 1: {default['rps'] / single['rps']:.2f}x the requests/s "
        f"({default['rps']:.0f} against {single['rps']:.0f}); p99 over every request "
        f"{default['p99_ms']:.0f} ms against {single['p99_ms']:.0f} ms"
    )
    path = save("load", {"clients": count, "runs": {str(w): r for w, r in runs.items()}})
    print(f"written to {path}; reproduce with: make load")
    sys.exit(0 if all(all(r["invariants"].values()) for r in runs.values()) else 1)


def one_run(endpoint: str, workers: int, count: int, seconds: float, seed: int) -> dict[str, Any]:
    """`count` clients for `seconds` against ``make dev`` with `workers` worker processes,
    on a table of its own; its figures and invariants."""
    record = Record()
    table = f"{TABLE}-{workers}"
    with (
        tempfile.TemporaryDirectory() as workdir,
        dev_process(
            Path(workdir),
            {
                "DYNAMODB_ENDPOINT": endpoint,
                "TABLE_NAME": table,
                "DEMO_INCIDENTS": os.environ.get("LOAD_INCIDENTS", "300"),
                "DEMO_SEED": str(seed),
                "DEV_CONCURRENCY": str(workers),
            },
        ) as running,
    ):
        ground = ground_truth(endpoint, table, record)
        threads = [
            threading.Thread(target=drive, args=(client, ground, time.monotonic() + seconds))
            for client in clients(running, record, count, seed)
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        server_mb = running.peak_rss_mb()
        (jvm,) = running_jvms(parent=os.getpid())
        jvm_mb = peak_rss_mb(jvm)
        checks = invariants(endpoint, table, record)
        running.interrupt()
    return report(record, checks, elapsed, (count, workers), (server_mb, jvm_mb))


def report(
    record: Record,
    checks: dict[str, bool],
    elapsed: float,
    load: tuple[int, int],
    rss: tuple[float, float],
) -> dict[str, Any]:
    """Print one run's figures; return them."""
    count, workers = load
    total = sum(record.statuses.values())
    every = sorted(s for samples in record.latencies.values() for s in samples)
    print(
        f"\n{workers} worker(s), {count} clients, {elapsed:.0f} s: {total} requests, "
        f"{total / elapsed:.0f} req/s"
    )
    routes = {}
    for route, samples in sorted(record.latencies.items()):
        ordered = sorted(samples)
        p50 = statistics.median(ordered) * 1000
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
        statuses = {s: n for (r, s), n in record.statuses.items() if r == route}
        routes[route] = {
            "requests": len(samples),
            "p50_ms": p50,
            "p99_ms": p99,
            "statuses": statuses,
        }
        print(f"  {route:<44}{len(samples):7}  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  {statuses}")
    print(f"walks: {dict(record.walks)}; restarted (memberships changed): {record.restarts}")
    server, jvm = rss
    print(f"peak RSS: largest server process {server:.0f} MB, DynamoDB Local JVM {jvm:.0f} MB")
    for name, ok in checks.items():
        print(f"  [{'ok' if ok else 'FAILED'}] {name}")
    for problem in record.problems[:10]:
        print(f"  problem: {problem}")
    return {
        "workers": workers,
        "seconds": elapsed,
        "requests": total,
        "rps": total / elapsed,
        "p99_ms": every[min(len(every) - 1, int(len(every) * 0.99))] * 1000 if every else 0.0,
        "routes": routes,
        "peak_rss_mb": {"server": server, "jvm": jvm},
        "invariants": checks,
    }


if __name__ == "__main__":
    main()
