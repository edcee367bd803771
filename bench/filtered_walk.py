"""Filtered walks: what walking a filtered list to its end costs, beside the unfiltered walk.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.filtered_walk``).
On AWS DynamoDB Local, a member's "all my teams" shape: `STREAMS` team streams, incidents
each with a copy on several of them under one sort key, a fraction of them matching the
filter (an attribute the filter expression tests: DynamoDB reads every item of the key
range and bills for it, match or not). Each list is walked to its end, newest first, with
the handlers' budget (3 s, 200 read units a page), filtered and unfiltered, at several
page sizes. Per walk: pages, read units (as DynamoDB Local reports them), the heaviest
page, and the filtered walk's units over the unfiltered walk's (goal: at most
`WALK_OVERHEAD` times; and no page over its budget).

The first row is the shape reported in issue 31: 100 teams, 287 incidents with a copy on 45
of them each, 5 of which match (``status=ACKNOWLEDGED&severity=SEV5``), pages of 100.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.support.report import recording_tables, save
from incidents.table import TABLE_SCHEMA
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine
from local.workloads.filtered_lists import (
    PAGE_SECONDS,
    READ_BUDGET,
    WALK_OVERHEAD,
    Shape,
    load,
    streams,
    walk,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

SHAPES = (
    (Shape(100, 287, 45, 5), (100, 25)),
    (Shape(100, 300, 3, 3), (100, 25, 10)),
    (Shape(100, 300, 3, 30), (100, 25, 10)),
    (Shape(16, 2000, 1, 20), (100, 25, 10)),
    (Shape(16, 2000, 1, 200), (100, 25, 10)),
    (Shape(16, 2000, 1, 1000), (100, 25)),
)


def measure(client: DynamoDBClient, table: str) -> list[dict[str, Any]]:
    """Every shape and page size: the filtered walk against the unfiltered one."""
    rows = []
    for shape, limits in SHAPES:
        expected = load(client, table, shape)
        for limit in limits:
            plain, _ = walk(client, streams(table, shape, filtered=False), limit)
            filtered, keys = walk(client, streams(table, shape, filtered=True), limit)
            if keys != expected:
                raise AssertionError(f"{shape.name} limit {limit}: the filtered walk is wrong")
            ratio = filtered.read_units / plain.read_units
            rows.append(
                {
                    "streams": shape.streams,
                    "incidents": shape.incidents,
                    "copies": shape.copies,
                    "matches": shape.matches,
                    "limit": limit,
                    "plain_pages": plain.pages,
                    "plain_rcu": plain.read_units,
                    "filtered_pages": filtered.pages,
                    "filtered_rcu": filtered.read_units,
                    "heaviest_page": max(plain.heaviest_page, filtered.heaviest_page),
                    "ratio": ratio,
                    "met": ratio <= WALK_OVERHEAD
                    and max(plain.heaviest_page, filtered.heaviest_page) <= READ_BUDGET,
                }
            )
    return rows


def main() -> None:
    """Measure on a fresh DynamoDB Local; print the table; save the JSON."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, "bench-filtered-walk")
        rows = measure(client, "bench-filtered-walk")
    print(
        f"filtered walks on {engine.description}, newest first, budget {PAGE_SECONDS:.0f} s /"
        f" {READ_BUDGET:.0f} RU a page (goals: filtered walk <= {WALK_OVERHEAD}x the"
        " unfiltered walk, every page <= its budget)\n"
    )
    print(
        "| streams | incidents | copies | matching | page | unfiltered pages / RCU "
        "| filtered pages / RCU | x unfiltered | heaviest page RCU | goals |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['streams']} | {r['incidents']} | {r['copies']} | {r['matches']} | {r['limit']}"
            f" | {r['plain_pages']} / {r['plain_rcu']:.1f} | {r['filtered_pages']} /"
            f" {r['filtered_rcu']:.1f} | {r['ratio']:.2f}x | {r['heaviest_page']:.1f} |"
            f" {'met' if r['met'] else 'MISSED'} |"
        )
    print(f"\nwritten to {save('filtered_walk', {'rows': rows})}")


if __name__ == "__main__":
    with recording_tables():
        main()
