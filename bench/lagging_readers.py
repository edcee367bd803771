"""A halving no reader can miss, over HTTP, and what "my teams" pays for its teams' maps.

On ``make dev`` (DynamoDB Local, `RUNS` accounts a variant), each account's events family
is grown to 4 shards and given `NOTES` notes; a minute later (the growth long past) page 1
of ``/events?limit=5`` is read, the family is halved to 2 and a mover is stepped until
its upper half is empty, and the walk goes on at once; what it listed is compared with a
full walk made just before page 1. Two movers: one that moves at once (``--move-after 0``,
the mover before `MOVE_AFTER_SECONDS`) and the shipped one, which waits until no server
can hold the map from before the halving.

Then the DynamoDB requests of one page of ``/me/teams/incidents`` for a member of 5 and of
50 teams, cache-cold (the maps' cache lapsed) and warm, from the handlers' call log.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.lagging_readers
"""

from __future__ import annotations

import json
import tempfile
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.support.report import recording_tables, save
from dynashard import GrowthPolicy, ShardMover, Table
from dynashard.keys.keys import shard_keys
from dynashard.resharding import MOVE_AFTER_SECONDS
from incidents.keys import ShardConfig
from incidents.table import TABLE_SCHEMA
from incidents.tenant_shards import OPERATOR, Family, build_tenant_shards
from local.api.dev_process import DevProcess, dev_process
from local.engines.clients import local_client
from local.engines.embedded_dynamodb import local_engine

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

RUNS = 20
NOTES = 30
PAGE = "/events?limit=5"
TABLE = "lagging-readers"
VARIANTS = {"moves at once": 0.0, "waits for every cached map": MOVE_AFTER_SECONDS}
TEAM_SIZES = (5, 50)


@dataclass
class Run:
    """One account's walk across a halving of its events."""

    token: str
    account: str
    truth: set[str] = field(default_factory=set)
    walked: list[str] = field(default_factory=list)
    cursor: str | None = None
    mover: ShardMover | None = None


def call(running: DevProcess, method: str, path: str, token: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        running.url + path, data=data, method=method,
        headers={"Authorization": token, "Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")


def walk(running: DevProcess, token: str, cursor: str | None = None) -> list[str]:
    """The event ids from `cursor` on (from the first page without one)."""
    seen: list[str] = []
    while True:
        path = PAGE + (f"&cursor={cursor}" if cursor else "")
        body = call(running, "GET", path, token)
        seen += [item["id"] for item in body["items"]]
        if not body["has_more"]:
            return seen
        cursor = body["next_cursor"]


def prepare(running: DevProcess, client: DynamoDBClient, run: Run) -> None:
    """Grow the account's events to 4 shards, then write an incident and `NOTES` notes."""
    shards = build_tenant_shards(Table(client, TABLE, TABLE_SCHEMA), ShardConfig(), policy=OPERATOR)
    counts, key = shards.counts(Family.EVENTS), Family.EVENTS.meta_key(run.account)
    for _ in range(2):
        counts.grow(key, counts.refresh(key))
    time.sleep(GrowthPolicy().cache_seconds + 1)  # the servers write at 4 shards
    incident = call(running, "POST", "/incidents", run.token, {"title": "halved"})
    for n in range(NOTES):
        call(running, "POST", f"/incidents/{incident['summary']['id']}/notes", run.token,
             {"text": f"note {n}"})  # fmt: skip


def upper_half(client: DynamoDBClient, run: Run) -> int:
    """The account's events still in shards 2 and 3 of 4."""
    return sum(
        client.query(
            TableName=TABLE, IndexName="GSI2", KeyConditionExpression="GSI2PK = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}}, Select="COUNT",
        )["Count"]
        for pk in shard_keys(Family.EVENTS.base(run.account), 4)[2:]
    )  # fmt: skip


def halve_between_pages(
    running: DevProcess, client: DynamoDBClient, runs: list[Run], move_after: float
) -> list[int]:
    """Each run's page 1, its halving, its mover stepped until the upper half is empty and
    its walk continued at once; the items each run missed. A mover that moves at once
    takes one run at a time (page 2 follows page 1 within the servers' cache); the waiting
    one takes all at once (each still steps from its own halving)."""
    batch = len(runs) if move_after else 1
    missing: list[int] = []
    for start in range(0, len(runs), batch):
        missing += _halve_batch(running, client, runs[start : start + batch], move_after)
    return missing


def _halve_batch(
    running: DevProcess, client: DynamoDBClient, runs: list[Run], move_after: float
) -> list[int]:
    counts = build_tenant_shards(
        Table(client, TABLE, TABLE_SCHEMA), ShardConfig(), policy=OPERATOR
    ).counts(Family.EVENTS)
    spec = Family.EVENTS.move_spec()
    for run in runs:
        run.truth = set(walk(running, run.token))
        first = call(running, "GET", PAGE, run.token)
        run.walked, run.cursor = [item["id"] for item in first["items"]], first["next_cursor"]
        counts.shrink(Family.EVENTS.meta_key(run.account), spec)
        run.mover = ShardMover(
            counts, Table(client, TABLE, TABLE_SCHEMA), index=spec.index, hashed=spec.hashed,
            move_after_seconds=move_after,
        )  # fmt: skip
    pending = list(runs)
    while pending:
        for run in list(pending):
            assert run.mover is not None
            run.mover.step(Family.EVENTS.meta_key(run.account))
            if upper_half(client, run) == 0:
                run.walked += walk(running, run.token, run.cursor)
                pending.remove(run)
        time.sleep(0.2 if pending else 0)
    return [len(run.truth - set(run.walked)) for run in runs]


def team_page_requests(running: DevProcess, token: str, log: Path) -> dict[str, int]:
    """Requests of one page of my teams' incidents, with the maps' cache lapsed, then warm."""
    answer: dict[str, int] = {}
    for state in ("cold", "warm"):
        if state == "cold":
            time.sleep(GrowthPolicy().cache_seconds + 1)
        before = len(log.read_text().splitlines())
        call(running, "GET", "/me/teams/incidents?state=OPEN&limit=25", token)
        lines = log.read_text().splitlines()[before:]
        actions = Counter(json.loads(line)["action"].removeprefix("dynamodb:") for line in lines)
        answer[state] = sum(n for action, n in actions.items() if action != "UpdateItem")
        answer[f"{state} map reads"] = actions["GetItem"] + actions["BatchGetItem"]
    return answer


def my_teams(running: DevProcess, log: Path) -> dict[int, dict[str, int]]:
    """A member of 5, then of 50 teams: the requests of a page (its quota's write apart)."""
    token = running.accounts[0]["users"][0]["token"]
    measured = {}
    for size in TEAM_SIZES:
        while len(call(running, "GET", "/me/teams", token)["items"]) < size:
            call(running, "POST", "/teams", token, {"name": "more"})
        measured[size] = team_page_requests(running, token, log)
    return measured


def main() -> None:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as workdir, local_engine("dynamodb-local") as engine:
        log = Path(workdir) / "calls.jsonl"
        settings = {
            "DYNAMODB_ENDPOINT": engine.endpoint, "TABLE_NAME": TABLE, "AWS_CALL_LOG": str(log),
            "DEMO_ACCOUNTS": str(2 * RUNS + 1), "DEMO_INCIDENTS": str(2 * (2 * RUNS + 1)),
            "DEV_CONCURRENCY": "1",
        }  # fmt: skip
        with dev_process(Path(workdir), settings) as running:
            client = local_client(engine.endpoint)
            runs = [
                Run(account["users"][0]["token"], account["account_id"])
                for account in running.accounts[1:]
            ]
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda run: prepare(running, client, run), runs))
            time.sleep(MOVE_AFTER_SECONDS)  # the growths long past: no reader distrusts them
            for number, (name, move_after) in enumerate(VARIANTS.items()):
                chosen = runs[number * RUNS : (number + 1) * RUNS]
                results[name] = halve_between_pages(running, client, chosen, move_after)
            results["my teams"] = my_teams(running, log)
            running.interrupt()
    report(results)


def report(results: dict[str, Any]) -> None:
    with recording_tables():
        print(f"{RUNS} walks of {PAGE} across a halving of the events from 4 to 2 shards,")
        print(f"{NOTES + 1} events an account, the walk continued as soon as the upper half")
        print("is empty (make dev, DynamoDB Local, 2 cores):")
        print()
        print("| mover | runs missing items | items missing, run by run |")
        print("|---|---:|---|")
        for name in VARIANTS:
            missing = results[name]
            lost = sum(1 for n in missing if n)
            print(f"| {name} | {lost} of {len(missing)} | {', '.join(map(str, missing))} |")
        print()
        print("DynamoDB requests of one page of `/me/teams/incidents` (reads; the quota's")
        print("write apart), with the shard maps' cache lapsed and warm:")
        print()
        print("| teams | requests, cache lapsed | of them map reads | requests, warm |")
        print("|---:|---:|---:|---:|")
        for size, row in results["my teams"].items():
            print(f"| {size} | {row['cold']} | {row['cold map reads']} | {row['warm']} |")
        print(f"written to {save('lagging_readers', results)}")


if __name__ == "__main__":
    main()
