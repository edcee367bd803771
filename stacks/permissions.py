"""Least privilege: the exact DynamoDB actions each handler group uses, and where.

Transactions need the action of each item they touch (``PutItem``, ``UpdateItem``,
``ConditionCheckItem``...); there is no separate transaction action to grant.
"""

from __future__ import annotations

from lambdas.routes import Group

TABLE_ACTIONS: dict[Group, tuple[str, ...]] = {
    Group.INCIDENT_QUERIES: ("dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"),
    Group.INCIDENT_COMMANDS: (
        "dynamodb:ConditionCheckItem",
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ),
    Group.TEAMS: (
        "dynamodb:BatchGetItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ),
    Group.WEBHOOKS: (
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ),
    Group.SCHEDULES: (
        "dynamodb:BatchGetItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ),
    Group.ALERTS: (
        "dynamodb:BatchGetItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ),
}
"""Queries read (point reads of metadata and memberships, fan-out queries); commands also
write summaries, copies, counters, shard metadata and idempotency records; teams write
teams, memberships (with the team's member count), profiles and users' contact methods
and notification rules (with their counts), and batch-read teams;
webhooks write webhooks with the account's count and read their delivery log; alerts write
integrations with their keys' lookup items, open incidents (as commands do), count alerts
(an add to a counter shard, all shards batch-read) and move incidents by their keys, and
query the account's live maintenance windows for each alert (keeping a suppressed one with
an update and a counter shard's add); schedules write a schedule with its versions, its
overrides and its current and next shift and timer (transactions checking its teams and
users, whose profiles a batch reads, and moving the account's count of schedules), query
its versions and overrides, and delete a deleted schedule's items in batches."""

QUOTA_KEYS = "*#ratelimit#*"
"""The partition keys of the accounts' quota buckets (`dynashard.limits.rate_limit`): each request
takes one from its account's, so a group that writes nothing else may update only these."""

AUTHORIZER_TABLE_ACTIONS = ("dynamodb:GetItem", "dynamodb:UpdateItem")
"""The authorizer finds an API key by its lookup item and reads the key (point reads), and
notes its last use (an update, at most once a minute)."""

PUBLISHER_TABLE_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
"""The publisher reads an account's webhooks and an incident's events missing before the
one it publishes, and reads and moves the incident's published position, with the insights'
aggregates in the same transaction (each an Update; its stream read is the event
source's); for a new page it reads its user's contact methods and rules and puts each
notification."""
SENDER_TABLE_ACTIONS = (
    "dynamodb:BatchWriteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
"""The sender reads a webhook, logs each attempt, reads and keeps each delivery's attempt
count and records the endpoint's health (and a replay pages the account's events: a query
of GSI2, granted on the index); while an endpoint's circuit is open it parks deliveries
(a Put and the webhook's count, in one transaction) and a drain queries and deletes them
(in batches)."""

SHARD_MOVER_TABLE_ACTIONS = (
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
"""The shard maintenance reads the counted keys and the registered moves and each key's
map, counts a quiet key's recent items (a Query of its shards) and halves it when cold (an
update of the map and a Put of its move's registration, in one transaction), moves items:
a summary by a copy (Put) and a delete, a list entry or a participation by re-pointing its
index key (an update), and settles a move (an update of the map and deletes of its
registrations, in one transaction)."""
SHARD_MOVER_INDEXES = ("GSI1", "GSI2")
"""Participations are sharded on GSI1, the account's lists and events on GSI2."""

SWEEPER_TABLE_ACTIONS = ("dynamodb:GetItem", "dynamodb:PutItem")
"""The sweep reads and moves its marker and reads the due index's map; firing is the
workers'."""
SWEEPER_INDEXES = ("GSI3",)
"""The due index: each minute's timers, sharded, queried."""
TIMER_WORKER_TABLE_ACTIONS = (
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
"""A worker fires a timer in one transaction with its claim (a conditional delete): a
heartbeat's expiry reads the heartbeat and its integration and opens an incident as a
create does (its number, its summary, details, copies and event, the team's check) with the
heartbeat's move; an auto-resolve resolves an incident as an update does (its summary and
event, then its participants' copies, queried); a maintenance window's end queries its
suppressed alerts and resolves each still triggered (an update) before its claim; a
schedule's handoff reads the schedule (its item, versions and overrides, a query) and
writes its current and next shift and its next timer with the claim and a check of the
schedule's version. A timer it sets is listed under its minute's shard count (GSI3's map,
an item of the table). It queries no index."""

INDEX_READERS: dict[Group, tuple[str, ...]] = {
    Group.INCIDENT_QUERIES: ("GSI1", "GSI2"),
    Group.INCIDENT_COMMANDS: ("GSI3",),
    Group.TEAMS: ("GSI1",),
}
"""The lists read GSI1 (participants) and GSI2 (account by state); the commands read GSI3
(an incident by its number); teams count a team's members on GSI1 once, for a team written
before the count was kept."""

GRANTED_FOR_THE_RUNTIME: dict[str, str] = {
    "logs:CreateLogStream": "the Lambda runtime writes the function's log stream",
    "logs:PutLogEvents": "the Lambda runtime writes the function's log events",
    "xray:PutTraceSegments": "the Lambda runtime's X-Ray daemon sends the traces",
    "xray:PutTelemetryRecords": "the Lambda runtime's X-Ray daemon sends its telemetry",
    "secretsmanager:GetSecretValue": (
        "the cursor key, read through Powertools Parameters in the cloud only (local runs "
        "and the suites sign with CURSOR_SECRET; test_cursor_secret covers the read on moto)"
    ),
    "dynamodb:DescribeStream": "the publisher's event source mapping reads the table stream",
    "dynamodb:GetRecords": "the publisher's event source mapping reads the table stream",
    "dynamodb:GetShardIterator": "the publisher's event source mapping reads the table stream",
    "dynamodb:ListStreams": "the publisher's event source mapping reads the table stream",
    "sqs:ReceiveMessage": "the sender's event source mapping receives the delivery queue",
    "sqs:GetQueueAttributes": "the sender's event source mapping reads the queue's settings",
    "sqs:GetQueueUrl": "the sender's event source mapping (CDK's grant for an SQS source)",
}
"""Grants no handler code calls in the test suites, each with the reason it exists; the
least-privilege test fails on any other grant that no recorded call uses."""
