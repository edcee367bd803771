"""What the API quota adds to a request (issue 39: every API request takes one from its
account's bucket): one conditional ``UpdateItem`` on the account's bucket item, against
the point read a small request already makes, on DynamoDB Local in one run.

Measured: the p50 latency of the quota's take (`dynashard.RateLimits`, as the handlers call
it) and of a ``GetItem`` of a small item, each timed 300 times on one client, interleaved;
the write units the take consumes (DynamoDB Local's ``ConsumedCapacity``), and how many
requests a take makes. Then what a take costs when `CONTAINERS` containers (each its own
`RateLimits`, so each its own view of the bucket) share one bucket, at random arrivals
(a simulated clock, seeded) from a tenth of the quota's pace to half again over it: a
container that last saw the bucket idle while the others made it busy tries the wrong
form of the write first, and that failed conditional write is a write unit too.
Reproduce: ``python -m bench.quota_cost``.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from bench.support.report import recording_tables, save
from dynashard import RateLimits, RatePolicy, Table
from incidents.store import new_id
from incidents.table import TABLE_SCHEMA
from lambdas.http.quotas import per_minute
from lambdas.settings import DEFAULT_API_REQUESTS_PER_MINUTE
from local.engines.clients import create_table, local_client, use_local_credentials
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

ROUNDS = 300
TABLE = "quota-cost"
CONTAINERS = 4
SHARED_TAKES = 400
PACES = (0.1, 0.5, 0.9, 1.0, 1.5)
"""Arrivals a second as a share of the quota's pace (1.0: exactly its limit)."""


def _p50(timings: list[float]) -> float:
    return round(statistics.median(timings), 2)


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    use_local_credentials()
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint)
        create_table(client, TABLE_SCHEMA, TABLE)
        key = {"PK": {"S": "bench#item"}, "SK": {"S": "item"}}
        client.put_item(TableName=TABLE, Item={**key, "title": {"S": "a small item"}})
        limits = RateLimits(Table(client, TABLE, TABLE_SCHEMA))
        policy = per_minute("api", DEFAULT_API_REQUESTS_PER_MINUTE * 100)  # never refuses
        account = new_id("acct")
        writes, units = [0], [0.0]

        def count(params: dict[str, object], **_: object) -> None:
            writes[0] += 1
            params["ReturnConsumedCapacity"] = "TOTAL"

        def consumed(parsed: dict[str, dict[str, float]], **_: object) -> None:
            units[0] += parsed.get("ConsumedCapacity", {}).get("CapacityUnits", 0.0)

        client.meta.events.register("provide-client-params.dynamodb.UpdateItem", count)
        client.meta.events.register("after-call.dynamodb.UpdateItem", consumed)
        reads, takes = [], []
        for _ in range(ROUNDS):
            reads.append(_timed(lambda: client.get_item(TableName=TABLE, Key=key)))
            takes.append(_timed(lambda: limits.take(account, "api", policy)))
        rows = {
            "GetItem (a small request's read)": {"p50_ms": _p50(reads), "requests": 1.0},
            "the quota's take": {
                "p50_ms": _p50(takes),
                "requests": round(writes[0] / ROUNDS, 2),
                "write_units": round(units[0] / ROUNDS, 2),
            },
        }
        shared = {f"{pace:.0%}": _shared_bucket(client, writes, pace) for pace in PACES}
    with recording_tables():
        print(f"The API quota's cost against a point read, {ROUNDS} of each interleaved, "
              f"{engine.description}:")  # fmt: skip
        print()
        print("| call | p50 | requests | write units |")
        print("|---|---:|---:|---:|")
        for name, row in rows.items():
            print(f"| {name} | {row['p50_ms']} ms | {row['requests']} "
                  f"| {row.get('write_units', 0)} |")  # fmt: skip
        ratio = (
            rows["the quota's take"]["p50_ms"] / rows["GetItem (a small request's read)"]["p50_ms"]
        )
        print()
        print(f"The take's p50 is {ratio:.2f}x a point read's.")
        print()
        print(f"{CONTAINERS} containers sharing one bucket, {SHARED_TAKES} takes at random "
              f"arrivals (a simulated clock):")  # fmt: skip
        print()
        print("| arrivals (share of the quota's pace) | refused | writes a take |")
        print("|---|---:|---:|")
        for pace, row in shared.items():
            print(f"| {pace} | {row['refused']:.0%} | {row['writes_per_take']} |")
        print(f"written to {save('quota_cost', {**rows, 'shared bucket': shared})}")


def _shared_bucket(client: DynamoDBClient, writes: list[int], pace: float) -> dict[str, float]:
    """`SHARED_TAKES` takes of one account's bucket by `CONTAINERS` containers in turn at
    random, arriving at `pace` times the quota's rate: the writes a take made (each a
    write unit, a failed conditional one too) and the share refused."""
    now = [time.time()]
    rng = random.Random(7)
    containers = [
        RateLimits(Table(client, TABLE, TABLE_SCHEMA), clock=lambda: now[0])
        for _ in range(CONTAINERS)
    ]
    policy = RatePolicy("api", limit=600, window_seconds=60)
    account, before, refused = new_id("acct"), writes[0], 0
    for _ in range(SHARED_TAKES):
        now[0] += rng.expovariate(pace * policy.limit / policy.window_seconds)
        refused += not rng.choice(containers).take(account, "api", policy).allowed
    taken = writes[0] - before
    return {"writes_per_take": round(taken / SHARED_TAKES, 2), "refused": refused / SHARED_TAKES}


if __name__ == "__main__":
    main()
