"""What the API quota adds to a request (issue 39: every API request takes one from its
account's bucket): one conditional ``UpdateItem`` on the account's bucket item, against
the point read a small request already makes, on DynamoDB Local in one run.

Measured: the p50 latency of the quota's take (`dynashard.RateLimits`, as the handlers call
it) and of a ``GetItem`` of a small item, each timed 300 times on one client, interleaved;
the write units the take consumes (DynamoDB Local's ``ConsumedCapacity``), and how many
requests a take makes. Reproduce: ``python -m bench.quota_cost``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from bench.support.report import recording_tables, save
from dynashard import RateLimits, Table
from incidents.store import new_id
from incidents.table import TABLE_SCHEMA
from lambdas.http.quotas import per_minute
from lambdas.settings import DEFAULT_API_REQUESTS_PER_MINUTE
from local.engines.clients import create_table, local_client, use_local_credentials
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

ROUNDS = 300
TABLE = "quota-cost"


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
        print(f"written to {save('quota_cost', rows)}")


if __name__ == "__main__":
    main()
