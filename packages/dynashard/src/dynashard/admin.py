"""A base key's shard count from a shell: show it, double it, or halve it and run the mover
until the halving settles (one JSON line a step, so its progress is visible and a crash
is resumed with ``move``).

    python -m dynashard.admin show   --table T --tenant acct_1 --base acct_1#k
    python -m dynashard.admin grow   --table T --tenant acct_1 --base acct_1#k
    python -m dynashard.admin shrink --table T --tenant acct_1 --base acct_1#k --pause 0.2
    python -m dynashard.admin move   --table T --tenant acct_1 --base acct_1#k
    python -m dynashard.admin moves  --table T     # the halvings still moving, and since when

``--endpoint`` points it at a local engine; otherwise the usual AWS credentials and region
reach a deployed table. ``--default-count`` must be the count the application gives a key
without metadata.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

import boto3

from dynashard.keys.schema import IndexSchema, TableSchema
from dynashard.resharding.mover import ShardMover
from dynashard.resharding.moves import MoveSpec, registered_moves
from dynashard.resharding.pace import DEFAULT_WRITE_UNITS_PER_SECOND, Pace
from dynashard.resharding.shard_counts import GrowthPolicy, ShardCounts
from dynashard.resharding.shard_meta import MOVE_AFTER_SECONDS, ShardMeta, ShardMetaKey
from dynashard.table import Table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dynashard", description=__doc__)
    parser.add_argument("command", choices=["show", "grow", "shrink", "move", "moves"])
    parser.add_argument("--table", required=True)
    parser.add_argument("--tenant", default="")
    parser.add_argument("--base", default="", help="the base key (without its shard)")
    parser.add_argument("--partition-key", default="PK")
    parser.add_argument("--sort-key", default="SK")
    parser.add_argument("--default-count", type=int, default=1)
    parser.add_argument("--max-count", type=int, default=64)
    parser.add_argument("--version-attribute", default="version")
    parser.add_argument("--index", default=None, help="the index whose partition key is sharded")
    parser.add_argument("--index-partition-key", default=None)
    parser.add_argument("--index-sort-key", default=None)
    parser.add_argument("--hash-attribute", default=None, help="what shards hash (sort key)")
    add_mover_arguments(parser)
    return parser


def add_mover_arguments(parser: argparse.ArgumentParser) -> None:
    """The mover's pace and where the table is: ``--page-size``, ``--pause``,
    ``--write-units``, ``--move-after``, ``--endpoint``, ``--region``."""
    parser.add_argument("--page-size", type=int, default=100, help="items a shard a step")
    parser.add_argument(
        "--write-units", type=float, default=DEFAULT_WRITE_UNITS_PER_SECOND,
        help="write units a second the mover takes from the partitions it fills",
    )  # fmt: skip
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between steps")
    parser.add_argument(
        "--move-after", type=float, default=MOVE_AFTER_SECONDS,
        help="seconds after the halving before anything moves (every cached map lapsed)",
    )  # fmt: skip
    parser.add_argument("--endpoint", default=None)
    parser.add_argument("--region", default=None)


def _index(args: argparse.Namespace) -> IndexSchema | None:
    if args.index is None:
        return None
    return IndexSchema(
        args.index,
        args.index_partition_key or f"{args.index}PK",
        args.index_sort_key or f"{args.index}SK",
    )


def shown(meta: ShardMeta) -> str:
    """One JSON line: the key's count, what readers cover, and its history."""
    return json.dumps(
        {
            "base": meta.key.base,
            "count": meta.shard_count,
            "read_count": meta.read_count,
            "moving_from": meta.moving_from,
            "history": [asdict(entry) for entry in meta.history],
        }
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; 0 once it is done."""
    args = _parser().parse_args(argv)
    client = boto3.client("dynamodb", endpoint_url=args.endpoint, region_name=args.region)
    policy = GrowthPolicy(
        default_count=args.default_count, max_count=args.max_count,
        cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0,
    )  # fmt: skip
    schema = TableSchema(args.partition_key, args.sort_key)
    if args.command == "moves":
        for move in registered_moves(Table(client, args.table, schema)):
            print(json.dumps({"base": move.key.base, "since": move.since}), flush=True)
        return 0
    counts = ShardCounts(Table(client, args.table, schema), policy=policy)
    key = ShardMetaKey.for_tenant(args.tenant, args.base)
    spec = MoveSpec(args.version_attribute, _index(args), args.hash_attribute)
    if args.command == "grow":
        counts.grow(key, counts.refresh(key))
    elif args.command == "shrink":
        counts.shrink(key, spec)
    print(shown(counts.refresh(key)), flush=True)
    if args.command in ("shrink", "move"):
        move_until_settled(mover_from(args, counts, client, schema, spec), key, args.pause)
    return 0


def mover_from(
    args: argparse.Namespace,
    counts: ShardCounts,
    client: DynamoDBClient,
    schema: TableSchema,
    spec: MoveSpec,
) -> ShardMover:
    """The mover `add_mover_arguments`' options describe, for keys moved as `spec` says."""
    return ShardMover(
        counts, Table(client, args.table, schema), spec.version_attribute, args.page_size,
        index=spec.index, hashed=spec.hashed, move_after_seconds=args.move_after,
        pace=Pace(args.write_units),
    )  # fmt: skip


def move_until_settled(mover: ShardMover, key: ShardMetaKey, pause: float) -> None:
    """Step `mover` on `key` until its halving settles, one JSON line a step, then the map."""
    while not (report := mover.step(key)).settled:
        print(json.dumps({"step": asdict(report)}), flush=True)
        time.sleep(pause)
    print(shown(mover.counts.refresh(key)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
