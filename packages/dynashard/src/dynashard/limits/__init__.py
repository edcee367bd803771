"""Limits kept in the table or on the client: rate limits, sharded counters, throttling
and retries."""

from dynashard.limits.counter import ShardedCounter
from dynashard.limits.rate_limit import Decision, RateLimits, RatePolicy
from dynashard.limits.retry import RetryPolicy
from dynashard.limits.throttling import (
    cancellation_codes,
    error_code,
    is_hot_key_throttling,
    is_throttling,
    throttling_reasons,
)

__all__ = [
    "Decision",
    "RateLimits",
    "RatePolicy",
    "RetryPolicy",
    "ShardedCounter",
    "cancellation_codes",
    "error_code",
    "is_hot_key_throttling",
    "is_throttling",
    "throttling_reasons",
]
