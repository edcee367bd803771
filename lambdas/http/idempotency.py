"""Idempotent creates: Powertools Idempotency with its records in the single table.

Records live under their own key prefix (``idempotency#<shard>``, SK = the record's hash)
and expire through the table's one TTL attribute, ``ExpiresAt``. Powertools puts every
record of a function under one static partition key; at a high create rate that one key
would run hot, so the partition key is sharded by the record's own hash, as every other
hot key here.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
)

from dynashard import calculated_shard, sharded_key
from incidents.table import item_key

RECORD_PREFIX = "idempotency"
RECORD_SHARDS = 16
EXPIRES_AFTER_SECONDS = 24 * 3600


class ShardedIdempotencyStore(DynamoDBPersistenceLayer):
    """Powertools' DynamoDB persistence layer with a sharded partition key.

    Overrides `_get_key`, Powertools' one place that builds a record's key (pinned
    version; the integration tests cover a replay end to end).
    """

    def _get_key(self, idempotency_key: str) -> dict[str, Any]:
        shard = calculated_shard(RECORD_PREFIX, idempotency_key, RECORD_SHARDS)
        return item_key(sharded_key(RECORD_PREFIX, shard, RECORD_SHARDS), idempotency_key)


def idempotency_config() -> IdempotencyConfig:
    """The key is (account, user, Idempotency-Key); the body must match on a replay."""
    return IdempotencyConfig(
        event_key_jmespath="[account, user, key]",
        payload_validation_jmespath="body",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=EXPIRES_AFTER_SECONDS,
    )
