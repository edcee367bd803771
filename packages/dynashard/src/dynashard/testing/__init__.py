"""Test doubles for code built on dynashard: an in-process Query with DynamoDB's ``Limit``
and 1 MB rules, and a client that throttles as a partition does."""

from dynashard.testing.fake_client import FakeQueryClient
from dynashard.testing.partition_capacity import PartitionCapacity

__all__ = ["FakeQueryClient", "PartitionCapacity"]
