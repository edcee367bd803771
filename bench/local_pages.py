"""What a newcomer waits for: list pages of ``make dev`` on DynamoDB Local and on moto.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.local_pages``;
``LOCAL_PAGES_BACKENDS=dynamodb-local`` measures one engine). For each engine it starts
``python -m local.dev`` exactly as ``make dev`` does, on the default demo data (1,000
incidents, 2 accounts), times its start-up to the first answered page (and where the time
goes, from its log: the engine's start, the table's creation, the seeding, the slowest
worker's cold start), then times 25-item first pages over HTTP as the
first user of the first account (a member of every team): one warm-up request, then the
median of `REPEATS`. Both engines run in the same process, one after the other, so the ratio
holds on any machine.
"""

from __future__ import annotations

import os
import re
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.support.report import save
from local.api.dev_process import dev_process
from local.engines.embedded_dynamodb import BACKENDS, DYNAMODB_LOCAL, MOTO

REPEATS = 7
LISTS = {
    "/me/incidents OPEN": "/me/incidents?state=OPEN&limit=25",
    "/me/teams/incidents OPEN": "/me/teams/incidents?state=OPEN&limit=25",
    "/incidents OPEN (8 shards)": "/incidents?state=OPEN&limit=25",
    "/incidents CLOSED (32 shards)": "/incidents?state=CLOSED&limit=25",
}


def page_ms(url: str, token: str) -> float:
    """Wall time of one GET, body read, in milliseconds."""
    request = urllib.request.Request(url, headers={"Authorization": token})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{url} answered {response.status}")
    return (time.perf_counter() - start) * 1000


def measure(backend: str) -> dict[str, float]:
    """Start-up seconds and median page milliseconds of every list on `backend`."""
    with tempfile.TemporaryDirectory() as workdir:
        started = time.perf_counter()
        settings = {"DYNAMODB_BACKEND": backend, "DEMO_STAGE_COUNTS": "1"}  # lists sharded
        with dev_process(Path(workdir), settings) as running:
            token = running.accounts[0]["users"][0]["token"]
            page_ms(running.url + LISTS["/me/incidents OPEN"], token)
            figures = {"startup_s": round(time.perf_counter() - started, 1)}
            figures.update(startup_parts(running.log_tail(100_000)))
            for name, path in LISTS.items():
                page_ms(running.url + path, token)
                times = [page_ms(running.url + path, token) for _ in range(REPEATS)]
                figures[name] = round(statistics.median(times), 1)
            running.interrupt()
    return figures


def startup_parts(log: str) -> dict[str, float]:
    """Where start-up went, from what ``local.dev`` logs: the engine, the table, the demo
    data (seconds), and each worker's cold start (the slowest, seconds)."""
    found = re.search(
        r"started in .*\(engine ([\d.]+) s, table ([\d.]+) s, demo data ([\d.]+) s", log
    )
    colds = [float(ms) / 1000 for ms in re.findall(r"cold start (\d+) ms", log)]
    if found is None or not colds:
        raise RuntimeError(f"local.dev did not log its start-up:\n{log[-2000:]}")
    engine, table, seeding = (float(part) for part in found.groups())
    return {"engine_s": engine, "table_s": table, "seeding_s": seeding, "worker_s": max(colds)}


def main() -> None:
    """Measure each engine and print a table with the moto / DynamoDB Local ratio."""
    chosen = os.environ.get("LOCAL_PAGES_BACKENDS", ",".join(BACKENDS)).split(",")
    results = {backend: measure(backend) for backend in chosen}
    print(f"make dev list pages, 25 items, median of {REPEATS} (ms); start-up to the first")
    print("answered page (s), of which: engine, table, seeding, slowest worker cold start (s)")
    print(f"{'list':<32}" + "".join(f"{backend:>16}" for backend in chosen) + "     ratio")
    for name in ["startup_s", "engine_s", "table_s", "seeding_s", "worker_s", *LISTS]:
        row = [results[backend][name] for backend in chosen]
        ratio = ""
        if {MOTO, DYNAMODB_LOCAL} <= results.keys():
            ratio = f"{results[MOTO][name] / results[DYNAMODB_LOCAL][name]:9.1f}x"
        print(f"{name:<32}" + "".join(f"{value:>16,.1f}" for value in row) + ratio)
    print(f"written to {save('local_pages', {'repeats': REPEATS, 'results': results})}")


if __name__ == "__main__":
    main()
