import uuid

import boto3

from dynashard import (
    GrowthPolicy,
    ShardCounts,
    ShardMetaKey,
    Table,
    TableSchema,
    calculated_shard,
    sharded_key,
)
from dynashard.resharding import (
    Operation,
    ShardedKey,
    Transaction,
    transact_growing,
)

schema = TableSchema("PK", "SK")
table = f"transactions-{uuid.uuid4().hex[:8]}"
client = boto3.client("dynamodb")
client.create_table(**schema.create_table_request(table))
client.get_waiter("table_exists").wait(TableName=table)

counts = ShardCounts(
    Table(client, table, schema), policy=GrowthPolicy(max_count=64)
)
assignee = ShardMetaKey.for_tenant("acct_1", "acct_1#user#u_7")
team = ShardMetaKey.for_tenant("acct_1", "acct_1#team#t_9")
order = "inc_0001"


def copy_for(key: ShardMetaKey) -> Operation[str]:
    """A put under `key`'s current count, labelled with its base; it grows
    `key` if throttled."""
    count = counts.get(key).shard_count
    shard = calculated_shard(key.base, order, count)
    item = {
        "PK": {"S": sharded_key(key.base, shard, count)},
        "SK": {"S": order},
    }
    put = {"Put": {"TableName": table, "Item": item}}
    return Operation(put, key.base, (ShardedKey(counts, key),))


# called again after a growth, with the new counts
def build() -> Transaction[str, str]:
    return Transaction([copy_for(assignee), copy_for(team)], order)


# a throttle grows the keys it names, then retries
written = transact_growing(client, build)
print(f"{written} written under {assignee.base} and {team.base} at once")
client.delete_table(TableName=table)
