"""An account's shard counts from a shell: show them, double one, halve one (and run its
mover until it settles), list the moves still running, or adopt a map-less account.

    python -m incidents.shards show   --table T --account acct_1
    python -m incidents.shards grow   --table T --account acct_1 --family open
    python -m incidents.shards shrink --table T --account acct_1 --family open
    python -m incidents.shards status --table T
    python -m incidents.shards adopt  --table T --account acct_1

Families: ``summaries``, ``open``, ``closed``, ``events``. ``adopt`` writes a map at the
stage's counts (``--summary-shards`` and the others, the stage's settings) for an account
that has none: do it for every account before a stage's count changes, or the account's
items are looked for at the new count. ``--endpoint`` points it at ``make dev``'s engine;
otherwise the usual AWS credentials and region reach a deployed stage. One JSON line each.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import boto3

from dynashard import Table
from dynashard.admin import add_mover_arguments, move_until_settled, mover_from, shown
from dynashard.keys import WeightedShards
from dynashard.resharding import registered_moves
from incidents.keys import (
    DEFAULT_EVENT_SHARDS,
    DEFAULT_STATE_SHARDS,
    DEFAULT_SUMMARY_SHARDS,
    ShardConfig,
)
from incidents.table import TABLE_SCHEMA
from incidents.tenant_shards import OPERATOR, Family, TenantShards, build_tenant_shards

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m incidents.shards", description=__doc__)
    parser.add_argument("command", choices=["show", "grow", "shrink", "status", "adopt"])
    parser.add_argument("--table", required=True)
    parser.add_argument("--account", default="")
    parser.add_argument("--family", choices=[family.value for family in Family], default=None)
    parser.add_argument("--summary-shards", type=int, default=DEFAULT_SUMMARY_SHARDS)
    parser.add_argument("--open-shards", type=int, default=DEFAULT_STATE_SHARDS["OPEN"])
    parser.add_argument("--closed-shards", type=int, default=DEFAULT_STATE_SHARDS["CLOSED"])
    parser.add_argument("--event-shards", type=int, default=DEFAULT_EVENT_SHARDS)
    add_mover_arguments(parser)
    return parser


def _config(args: argparse.Namespace) -> ShardConfig:
    states = {"OPEN": args.open_shards, "CLOSED": args.closed_shards}
    return ShardConfig(args.summary_shards, WeightedShards(states), args.event_shards)


def _families(args: argparse.Namespace) -> list[Family]:
    if args.family is None and args.command in ("grow", "shrink"):
        raise SystemExit(f"{args.command} needs --family")
    return [Family(args.family)] if args.family else list(Family)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; 0 once it is done."""
    args = _parser().parse_args(argv)
    client = boto3.client("dynamodb", endpoint_url=args.endpoint, region_name=args.region)
    table = Table(client, args.table, TABLE_SCHEMA)
    if args.command == "status":
        for move in registered_moves(table):
            print(json.dumps({"base": move.key.base, "since": move.since}), flush=True)
        return 0
    if not args.account:
        raise SystemExit(f"{args.command} needs --account")
    config = _config(args)
    shards = build_tenant_shards(table, config, policy=OPERATOR)
    if args.command == "adopt":
        shards.ensure_maps(args.account, config=config)
    for family in _families(args):
        _run(args, shards, family, client)
    return 0


def _run(
    args: argparse.Namespace, shards: TenantShards, family: Family, client: DynamoDBClient
) -> None:
    counts, key = shards.counts(family), family.meta_key(args.account)
    if args.command == "grow":
        counts.grow(key, counts.refresh(key))
    elif args.command == "shrink":
        spec = family.move_spec()
        counts.shrink(key, spec)
        print(shown(counts.refresh(key)), flush=True)
        move_until_settled(mover_from(args, counts, client, TABLE_SCHEMA, spec), key, args.pause)
        return
    print(json.dumps({"family": family.value, **json.loads(shown(counts.refresh(key)))}))


if __name__ == "__main__":
    sys.exit(main())
