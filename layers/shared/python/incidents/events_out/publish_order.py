"""Each incident's events go out in `seq` order, whatever order the stream hands them in.

DynamoDB Streams orders records per item; an incident's events are separate items, so
across shards (a partition split, one split for heat on a busy incident) their order is not
promised, and a record can come after a later one. The publisher keeps, per incident, the
last `seq` it published (an item of its own, ``<acct>#<incident id>#published``): a record
at or below it is a repeat and is skipped; a record beyond the next is a gap, filled from
the timeline (the source of truth) before it. The position moves only after the events
went out, and only from the value read (a conditional write), so a crash or a concurrent
publisher delivers an event twice at worst (receivers deduplicate on its id), never skips
one. An incident with no position yet (its events published before this existed) fills
only the events the stream still holds (24 hours): older ones went out then.
"""

from __future__ import annotations

from datetime import timedelta

from botocore.exceptions import ClientError

from dynashard.query import Item
from incidents.keys import event_key, published_key
from incidents.models import timestamp
from incidents.store import Store
from incidents.timeline.events import event_from_item

STREAM_RETENTION = timedelta(hours=24)


class PublishRaceError(Exception):
    """Another publisher moved the incident's position meanwhile: the batch is retried."""


def published_seq(store: Store, account: str, incident_id: str) -> int | None:
    """The last `seq` of the incident published, None before the first (strongly read)."""
    item = store.get(*published_key(account, incident_id))
    return int(item["seq"]["N"]) if item else None


def missing_before(
    store: Store, account: str, incident_id: str, seq: int, published: int | None
) -> list[Item]:
    """The stored events between the position and `seq` (exclusive), in order; with no
    position, only those the stream still holds."""
    first = (published or 0) + 1
    if first >= seq:
        return []
    pk, low = event_key(account, incident_id, first)
    _, high = event_key(account, incident_id, seq - 1)
    pages = store.client.get_paginator("query").paginate(
        TableName=store.table_name,
        KeyConditionExpression="PK = :pk AND SK BETWEEN :low AND :high",
        ExpressionAttributeValues={":pk": {"S": pk}, ":low": {"S": low}, ":high": {"S": high}},
        ConsistentRead=True,
    )
    items = [item for page in pages for item in page.get("Items", [])]
    if published is not None:
        return items
    since = timestamp(store.clock() - STREAM_RETENTION)
    return [item for item in items if event_from_item(item).at >= since]


def advance(store: Store, account: str, incident_id: str, seq: int, was: int | None) -> None:
    """The position to `seq`, from `was` only (`PublishRaceError` if it moved; no `seq`
    is 0, so a missing position reads as 0 in the condition)."""
    pk, sk = published_key(account, incident_id)
    try:
        store.client.put_item(
            TableName=store.table_name,
            Item={
                "PK": {"S": pk},
                "SK": {"S": sk},
                "Type": {"S": "published"},
                "seq": {"N": str(seq)},
            },
            ConditionExpression="attribute_not_exists(PK) OR seq = :was",
            ExpressionAttributeValues={":was": {"N": str(was or 0)}},
        )
    except ClientError as error:
        if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
            raise PublishRaceError(f"incident {incident_id} was published past {was}") from None
        raise
