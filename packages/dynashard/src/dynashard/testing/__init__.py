"""Test doubles for code built on dynashard: an in-process Query with DynamoDB's ``Limit``
and 1 MB rules, a client that throttles as a partition does, DynamoDB Local as a child
process (`dynashard.testing.dynamodb_local`), and data for fan-out properties
(`dynashard.testing.fanout_data`)."""

from dynashard.testing.fake_client import FakeQueryClient
from dynashard.testing.partition_capacity import PartitionCapacity

__all__ = ["FakeQueryClient", "PartitionCapacity"]
