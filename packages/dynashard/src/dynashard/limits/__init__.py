"""Limits kept in the table: rate limits, sharded counters and sequences."""

from dynashard.limits.counter import ShardedCounter
from dynashard.limits.rate_limit import Decision, RateLimits, RatePolicy
from dynashard.limits.sequence import Sequence

__all__ = ["Decision", "RateLimits", "RatePolicy", "Sequence", "ShardedCounter"]
