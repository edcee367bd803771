"""A DynamoDB client that throttles as a partition does (DynamoDB Local never throttles).

Each table partition key serves `units_per_second` write units in any one-second window
(DynamoDB: 1,000 a partition; scaled down here so a test reaches it with a few dozen
items); a write that would exceed it fails with ``ProvisionedThroughputExceededException``
and a ``TableWriteKeyRangeThroughputExceeded`` reason, and writes nothing. Write units are
billed as DynamoDB bills them: 1 KB of the item written (a put) or of the item stored (a
delete, an update that keeps the item's size), at least one. Stricter than AWS: no burst
capacity (DynamoDB may lend a partition up to 300 s of unused capacity), and index
partitions are not modelled (only the table's).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from dynashard.resharding.pace import write_units

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

WINDOW_SECONDS = 1.0


class PartitionCapacity:
    """`client`, with a write budget per partition key per second on `clock`."""

    def __init__(
        self,
        client: DynamoDBClient,
        units_per_second: int,
        clock: Callable[[], float],
        partition_key: str = "PK",
    ) -> None:
        self._client, self._limit, self._clock = client, units_per_second, clock
        self._pk = partition_key
        self._written: dict[str, deque[tuple[float, int]]] = defaultdict(deque)
        self.exceptions = client.exceptions
        self.throttled: list[str] = []
        """The partition of each write refused, in order."""
        self.busiest = 0
        """The most write units one partition took in one window."""

    def put_item(self, **request: Any) -> Any:
        item = request["Item"]
        self._spend(item[self._pk]["S"], write_units(item), "PutItem")
        return self._client.put_item(**request)

    def delete_item(self, **request: Any) -> Any:
        self._spend(request["Key"][self._pk]["S"], self._stored_units(request), "DeleteItem")
        return self._client.delete_item(**request)

    def update_item(self, **request: Any) -> Any:
        self._spend(request["Key"][self._pk]["S"], self._stored_units(request), "UpdateItem")
        return self._client.update_item(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def _stored_units(self, request: dict[str, Any]) -> int:
        stored = self._client.get_item(
            TableName=request["TableName"], Key=request["Key"], ConsistentRead=True
        )
        return write_units(stored.get("Item", request["Key"]))

    def _spend(self, partition: str, units: int, operation: str) -> None:
        now, window = self._clock(), self._written[partition]
        while window and window[0][0] <= now - WINDOW_SECONDS:
            window.popleft()
        taken = sum(spent for _, spent in window)
        if taken + units > self._limit:
            self.throttled.append(partition)
            refused: Any = {
                "Error": {
                    "Code": "ProvisionedThroughputExceededException",
                    "Message": f"{partition}: {taken} of {self._limit} write units taken",
                },
                "ThrottlingReasons": [{"reason": "TableWriteKeyRangeThroughputExceeded"}],
            }
            raise ClientError(refused, operation)
        window.append((now, units))
        self.busiest = max(self.busiest, taken + units)
