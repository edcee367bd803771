"""What a small tenant pays, before and after per-account shard counts (issue 38): the
DynamoDB requests of one first page, for an account of ten incidents, on ``make dev``
(DynamoDB Local) with ``DEMO_INCIDENTS=20`` (two accounts of ten), counted from the
handlers' own call log (``AWS_CALL_LOG``: every request a handler makes, one line each).
Before: the accounts at the stage's counts (``DEMO_STAGE_COUNTS=1``, as every account was
before the maps); after: as a new account is now (one shard a list). Every request is
billed at least DynamoDB's minimum read unit; the floor is one Query, which would hold all
ten incidents.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.small_tenant
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

from bench.support.report import recording_tables, save
from local.api.dev_process import dev_process

PAGES = {
    "/events?limit=25": "the account's events, newest first",
    "/incidents?state=OPEN&limit=25": "the account's open incidents",
    "/incidents?state=CLOSED&limit=25": "the account's closed incidents",
    "/me/incidents?state=OPEN&limit=25": "my open incidents",
    "/me/teams/incidents?state=OPEN&limit=25": "my teams' open incidents",
}
FLOOR = 1
QUOTA_WRITE = "UpdateItem"
"""A GET's only write: its account's API quota (`lambdas.http.quotas`)."""


def requests_of(url: str, token: str, log: Path) -> tuple[Counter[str], int]:
    """The DynamoDB requests one GET made, by action, and the items it answered."""
    before = len(log.read_text().splitlines()) if log.exists() else 0
    request = urllib.request.Request(url, headers={"Authorization": token})
    with urllib.request.urlopen(request, timeout=60) as response:
        items = len(json.loads(response.read())["items"])
    lines = log.read_text().splitlines()[before:]
    return Counter(json.loads(line)["action"].removeprefix("dynamodb:") for line in lines), items


VARIANTS = {"before": {"DEMO_STAGE_COUNTS": "1"}, "after": {}}
"""Before: the stage's counts (every account before the maps); after: a new account's."""
REPEATS = 15
"""Timed GETs of each page, for its p50 latency."""
MIN_UNITS = 0.5
"""What DynamoDB bills a request at least: one 4 KB unit, eventually consistent."""


def measure(variant: dict[str, str]) -> dict[str, dict[str, object]]:
    """Each page's requests (by action), items and p50 latency on a ``make dev`` seeded as
    `variant` says."""
    with tempfile.TemporaryDirectory() as workdir:
        log = Path(workdir) / "calls.jsonl"
        settings = {"DEMO_INCIDENTS": "20", "AWS_CALL_LOG": str(log), "DEV_CONCURRENCY": "1"}
        results: dict[str, dict[str, object]] = {}
        with dev_process(Path(workdir), settings | variant) as running:
            token = running.accounts[0]["users"][0]["token"]
            for path in PAGES:
                requests_of(running.url + path, token, log)  # warm: metadata and caches
                calls, items = requests_of(running.url + path, token, log)
                timings = []
                for _ in range(REPEATS):
                    started = time.perf_counter()
                    requests_of(running.url + path, token, log)
                    timings.append((time.perf_counter() - started) * 1000)
                p50 = statistics.median(timings)
                results[path] = {"calls": dict(calls), "items": items, "p50_ms": round(p50, 1)}
            running.interrupt()
    return results


def _reads(row: dict[str, object]) -> int:
    """The read requests of one page (its quota's write apart)."""
    calls: dict[str, int] = dict(row["calls"])  # type: ignore[call-overload]
    return sum(count for action, count in calls.items() if action != QUOTA_WRITE)


def main() -> None:
    measured = {name: measure(variant) for name, variant in VARIANTS.items()}
    with recording_tables():
        print("A ten-incident account's first pages on make dev (DynamoDB Local, 2 cores):")
        print("requests, the read units they are billed at least, p50 latency")
        print()
        print("| page | items | requests before | after | read units before | after "
              "| p50 before | after |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for path in PAGES:
            before, after = measured["before"][path], measured["after"][path]
            counts = [_reads(row) for row in (before, after)]
            print(
                f"| `{path}` | {after['items']} | {counts[0]} | {counts[1]} "
                f"| {counts[0] * MIN_UNITS:.1f} | {counts[1] * MIN_UNITS:.1f} "
                f"| {before['p50_ms']} ms | {after['p50_ms']} ms |"
            )
        print()
        quota = {dict(row["calls"]).get(QUOTA_WRITE, 0) for row in measured["after"].values()}  # type: ignore[call-overload]
        print(f"Floor: {FLOOR} Query ({FLOOR * MIN_UNITS} read units). Reads only: each GET "
              f"also made {'/'.join(map(str, sorted(quota)))} write (its account's API "
              "quota, 1 write unit), counted apart.")  # fmt: skip
        print(f"written to {save('small_tenant', measured)}")


if __name__ == "__main__":
    main()
