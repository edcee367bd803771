import uuid

import boto3

from dynashard import (
    CursorCodec,
    FanOutQuery,
    IndexSchema,
    SortKeyRange,
    Table,
    TableSchema,
    calculated_shard,
    client_config,
    shard_keys,
    sharded_key,
)

SHARDS = 4
schema = TableSchema("PK", "SK", (IndexSchema("GSI1", "GSI1PK", "GSI1SK"),))
name = f"fanout-{uuid.uuid4().hex[:8]}"
# a connection pool sized to the engine's workers
client = boto3.client("dynamodb", config=client_config(16))
table = Table(client, name, schema)
client.create_table(**schema.create_table_request(name))
client.get_waiter("table_exists").wait(TableName=name)

# Incidents listed under each team they involve (a copy per team),
# sharded per team.
account, my_teams = "acct_1", ["team_a", "team_b", "team_c"]
for n in range(60):
    incident, state = f"inc_{n:03d}", "CLOSED" if n % 3 else "OPEN"
    # some incidents involve two or three teams
    for team in my_teams[: 1 + n % 3]:
        base = f"{account}#{team}#incpart"
        pk = sharded_key(
            base, calculated_shard(base, incident, SHARDS), SHARDS
        )
        item = {
            "PK": {"S": f"{incident}#{team}"},
            "SK": {"S": "copy"},
            "GSI1PK": {"S": pk},
            "GSI1SK": {"S": f"{state}#2026-11-{1 + n % 28:02d}#{incident}"},
            "IncidentId": {"S": incident},
        }
        client.put_item(TableName=name, Item=item)

engine = table.engine(
    CursorCodec(b"a-secret-from-your-config-32-b!!"), max_workers=16
)
# one stream a shard of each team, on the index (its key attributes from
# the schema)
streams = table.streams(
    [
        pk
        for team in my_teams
        for pk in shard_keys(f"{account}#{team}#incpart", SHARDS)
    ],
    SortKeyRange.begins_with("CLOSED#"),
    index="GSI1",
)
listed: list[str] = []
cursor = None  # None for page 1
while True:
    page = engine.page(
        FanOutQuery(
            streams=streams,
            # who asks, with which filters
            binding=f"{account}|user_1|GET /me/teams/incidents|state=CLOSED",
            limit=10,
            descending=True,  # newest first
            # copies via two teams count once
            identity=lambda item: item["IncidentId"]["S"],
            cursor=cursor,
        )
    )
    listed += [item["IncidentId"]["S"] for item in page.items]
    if not page.has_more:
        break
    cursor = page.next_cursor

assert len(listed) == len(set(listed)) == 40, "each closed incident once"
print(f"{len(listed)} closed incidents over {len(streams)} streams, each once")
engine.close()
client.delete_table(TableName=name)
