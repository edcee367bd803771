"""What a small tenant pays for the stage-wide shard counts (issue 38's "before"): the
DynamoDB requests of one first page, for an account of ten incidents, on ``make dev``
(DynamoDB Local) with ``DEMO_INCIDENTS=20`` (two accounts of ten), counted from the
handlers' own call log (``AWS_CALL_LOG``: every request a handler makes, one line each).
Every request is billed at least DynamoDB's minimum read unit; the floor is one Query, which
would hold all ten incidents.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.small_tenant
"""

from __future__ import annotations

import json
import tempfile
import urllib.request
from collections import Counter
from pathlib import Path

from bench.report import recording_tables, save
from local.dev_process import dev_process

PAGES = {
    "/events?limit=25": "the account's events, newest first",
    "/incidents?state=OPEN&limit=25": "the account's open incidents",
    "/incidents?state=CLOSED&limit=25": "the account's closed incidents",
    "/me/incidents?state=OPEN&limit=25": "my open incidents",
    "/me/teams/incidents?state=OPEN&limit=25": "my teams' open incidents",
}
FLOOR = 1


def requests_of(url: str, token: str, log: Path) -> tuple[Counter[str], int]:
    """The DynamoDB requests one GET made, by action, and the items it answered."""
    before = len(log.read_text().splitlines()) if log.exists() else 0
    request = urllib.request.Request(url, headers={"Authorization": token})
    with urllib.request.urlopen(request, timeout=60) as response:
        items = len(json.loads(response.read())["items"])
    lines = log.read_text().splitlines()[before:]
    return Counter(json.loads(line)["action"].removeprefix("dynamodb:") for line in lines), items


def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        log = Path(workdir) / "calls.jsonl"
        settings = {"DEMO_INCIDENTS": "20", "AWS_CALL_LOG": str(log), "DEV_CONCURRENCY": "1"}
        results: dict[str, dict[str, object]] = {}
        with dev_process(Path(workdir), settings) as running:
            token = running.accounts[0]["users"][0]["token"]
            for path in PAGES:
                requests_of(running.url + path, token, log)  # warm: metadata and caches
                calls, items = requests_of(running.url + path, token, log)
                results[path] = {"calls": dict(calls), "items": items}
            running.interrupt()
    with recording_tables():
        print("A ten-incident account's first pages on make dev (DynamoDB Local), requests")
        print()
        print("| page | items | Query | other requests | vs one Query |")
        print("|---|---:|---:|---:|---:|")
        for path, row in results.items():
            calls = dict(row["calls"])  # type: ignore[call-overload]
            queries = calls.pop("Query", 0)
            others = ", ".join(f"{n} {action}" for action, n in sorted(calls.items())) or "-"
            print(
                f"| `{path}` | {row['items']} | {queries} | {others} "
                f"| {(queries + sum(calls.values())) / FLOOR:.0f}x |"
            )
        print(f"written to {save('small_tenant', {'pages': results})}")


if __name__ == "__main__":
    main()
