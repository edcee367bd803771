import uuid
from typing import Any

import boto3

from dynashard import (
    GrowthPolicy,
    ShardCounts,
    ShardMetaKey,
    Table,
    TableSchema,
    calculated_shard,
    find_item,
    shard_keys,
    sharded_key,
    write_growing,
)

schema = TableSchema("PK", "SK")
table = f"growing-{uuid.uuid4().hex[:8]}"
client = boto3.client("dynamodb")
client.create_table(**schema.create_table_request(table))
client.get_waiter("table_exists").wait(TableName=table)

counts = ShardCounts(
    Table(client, table, schema), policy=GrowthPolicy(max_count=64)
)
meta_key = ShardMetaKey.for_tenant("acct_1", "acct_1#team#t_9")
sort_key = "inc_0001"


# called with the current count, again after a growth
def put(count: int) -> None:
    shard = calculated_shard(meta_key.base, sort_key, count)
    item = {
        "PK": {"S": sharded_key(meta_key.base, shard, count)},
        "SK": {"S": sort_key},
    }
    client.put_item(TableName=table, Item=item)


def read_at(shard: int, count: int) -> dict[str, Any] | None:
    key = {
        "PK": {"S": sharded_key(meta_key.base, shard, count)},
        "SK": {"S": sort_key},
    }
    found: dict[str, Any] | None = client.get_item(
        TableName=table, Key=key
    ).get("Item")
    return found


# on hot-key throttling: grow the count, write again
write_growing(counts, meta_key, put)
meta = counts.get(meta_key)
item = find_item(
    counts,
    meta_key,
    meta_key.base,
    sort_key,
    lambda s: read_at(s, meta.shard_count),
)
assert item is not None
# what a list fans out over
readers_cover = shard_keys(meta_key.base, meta.read_count)
print(
    f"written at {meta.shard_count}; readers cover {len(readers_cover)} shards"
)
client.delete_table(TableName=table)
