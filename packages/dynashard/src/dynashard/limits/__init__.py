"""Limits kept in the table: rate limits and sharded counters."""

from dynashard.limits.counter import ShardedCounter
from dynashard.limits.rate_limit import Decision, RateLimits, RatePolicy

__all__ = ["Decision", "RateLimits", "RatePolicy", "ShardedCounter"]
