import asyncio
import uuid

import boto3
from aiobotocore.session import get_session

from dynashard import (
    CursorCodec,
    FanOutQuery,
    Table,
    TableSchema,
    calculated_shard,
    shard_keys,
    sharded_key,
)
from dynashard.aio import client_config

SHARDS = 16
# The table's handle carries its name and schema; its engine reads through
# the event loop's aiobotocore client.
table = Table(
    boto3.client("dynamodb"),
    f"async-{uuid.uuid4().hex[:8]}",
    TableSchema("PK", "SK"),
)
codec = CursorCodec(b"use-a-secret-of-32-bytes-or-more")


async def main() -> None:
    async with get_session().create_client(
        "dynamodb", config=client_config(SHARDS)
    ) as client:
        await client.create_table(
            **table.schema.create_table_request(table.name)
        )
        await client.get_waiter("table_exists").wait(TableName=table.name)
        base = "acct_1#alerts"
        for n in range(50):  # one hot logical key over 16 partition keys
            sort_key = f"alert#{n:03d}"
            pk = sharded_key(
                base, calculated_shard(base, sort_key, SHARDS), SHARDS
            )
            await client.put_item(
                TableName=table.name,
                Item={"PK": {"S": pk}, "SK": {"S": sort_key}},
            )

        engine = table.async_engine(client, codec, max_concurrency=SHARDS)
        streams = table.streams(shard_keys(base, SHARDS))
        query = FanOutQuery(streams=streams, binding=base, limit=20)
        # each wave's 16 Queries awaited together
        first = await engine.page(query)
        rest = await engine.page(
            FanOutQuery(
                streams=streams,
                binding=base,
                limit=30,
                cursor=first.next_cursor,
            )
        )
        listed = [item["SK"]["S"] for item in [*first.items, *rest.items]]
        assert listed == [f"alert#{n:03d}" for n in range(50)]
        print(f"{len(listed)} items, {SHARDS} shards, 2 pages, one event loop")
        await client.delete_table(TableName=table.name)


asyncio.run(main())
