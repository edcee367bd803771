import uuid

import boto3

from dynashard import (
    CursorCodec,
    FanOutQuery,
    Table,
    TableSchema,
    calculated_shard,
    client_config,
    shard_keys,
    sharded_key,
)

SHARDS = 8
schema = TableSchema(partition_key="PK", sort_key="SK")
client = boto3.client("dynamodb", config=client_config(SHARDS))
table = Table(client, f"quickstart-{uuid.uuid4().hex[:8]}", schema)
client.create_table(**schema.create_table_request(table.name))
client.get_waiter("table_exists").wait(TableName=table.name)

# One hot logical key ("acct_1#orders") written over 8 partition keys.
base = "acct_1#orders"
for n in range(100):
    sort_key = f"order#{n:03d}"
    shard = calculated_shard(base, sort_key, SHARDS)
    item = {
        "PK": {"S": sharded_key(base, shard, SHARDS)},
        "SK": {"S": sort_key},
    }
    client.put_item(TableName=table.name, Item=item)

# Read them back as one list, newest first, 25 a page, through the
# signed cursor: one stream a shard, made by the table.
codec = CursorCodec(b"use-a-secret-of-32-bytes-or-more")
streams = table.streams(shard_keys(base, SHARDS))
listed, cursor, pages = [], None, 0
with table.engine(codec, max_workers=SHARDS) as engine:
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
        listed += [item["SK"] for item in page.python_items()]
        pages += 1
        if not page.has_more:
            break
        cursor = page.next_cursor

assert listed == [f"order#{n:03d}" for n in reversed(range(100))]
summary = f"{len(listed)} items from {SHARDS} shards in {pages} pages"
print(f"{summary}, newest first")
client.delete_table(TableName=table.name)
