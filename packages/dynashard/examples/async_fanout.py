import asyncio
import uuid

from aiobotocore.session import get_session

from dynashard import (
    CursorCodec,
    FanOutQuery,
    PartitionStream,
    TableSchema,
    calculated_shard,
    shard_keys,
    sharded_key,
)
from dynashard.aio import AsyncFanOutEngine, client_config

SHARDS = 16
schema = TableSchema("PK", "SK")
table = f"async-{uuid.uuid4().hex[:8]}"
codec = CursorCodec(b"use-a-secret-of-32-bytes-or-more")


async def main() -> None:
    async with get_session().create_client(
        "dynamodb", config=client_config(SHARDS)
    ) as client:
        await client.create_table(**schema.create_table_request(table))
        await client.get_waiter("table_exists").wait(TableName=table)
        base = "acct_1#alerts"
        for n in range(50):  # one hot logical key over 16 partition keys
            sort_key = f"alert#{n:03d}"
            pk = sharded_key(
                base, calculated_shard(base, sort_key, SHARDS), SHARDS
            )
            await client.put_item(
                TableName=table, Item={"PK": {"S": pk}, "SK": {"S": sort_key}}
            )

        engine = AsyncFanOutEngine(client, codec, max_concurrency=SHARDS)
        streams = [
            PartitionStream(table, "PK", key, "SK")
            for key in shard_keys(base, SHARDS)
        ]
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
        await client.delete_table(TableName=table)


asyncio.run(main())
