import uuid

import boto3

from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    PartitionStream,
    calculated_shard,
    client_config,
    shard_keys,
    sharded_key,
)

SHARDS = 8
table = f"quickstart-{uuid.uuid4().hex[:8]}"
client = boto3.client("dynamodb", config=client_config(SHARDS))
client.create_table(
    TableName=table,
    BillingMode="PAY_PER_REQUEST",
    AttributeDefinitions=[
        {"AttributeName": "PK", "AttributeType": "S"},
        {"AttributeName": "SK", "AttributeType": "S"},
    ],
    KeySchema=[
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ],
)
client.get_waiter("table_exists").wait(TableName=table)

# One hot logical key ("acct_1#orders") written over 8 partition keys.
base = "acct_1#orders"
for n in range(100):
    sort_key = f"order#{n:03d}"
    shard = calculated_shard(base, sort_key, SHARDS)
    item = {
        "PK": {"S": sharded_key(base, shard, SHARDS)},
        "SK": {"S": sort_key},
    }
    client.put_item(TableName=table, Item=item)

# Read them back as one list, newest first, 25 a page, through the
# signed cursor.
engine = FanOutEngine(
    client,
    CursorCodec(b"use-a-secret-of-32-bytes-or-more"),
    max_workers=SHARDS,
)
streams = [
    PartitionStream(
        table_name=table,
        partition_key="PK",
        partition_value=key,
        sort_key="SK",
    )
    for key in shard_keys(base, SHARDS)
]
listed, cursor, pages = [], None, 0
while True:
    page = engine.page(
        FanOutQuery(
            streams=streams,
            binding=base,
            limit=25,
            descending=True,
            cursor=cursor,
        )
    )
    listed += [item["SK"]["S"] for item in page.items]
    pages += 1
    if not page.has_more:
        break
    cursor = page.next_cursor

assert listed == [f"order#{n:03d}" for n in reversed(range(100))]
summary = f"{len(listed)} items from {SHARDS} shards in {pages} pages"
print(f"{summary}, newest first")
client.delete_table(TableName=table)
