"""Test doubles for code built on dynashard: an in-process Query with DynamoDB's ``Limit``
and 1 MB rules, and a client that throttles as a partition does."""
