"""DynamoDB pushing back: recognise throttling (and a hot key among its reasons), read a
cancelled transaction's codes, and retry with back-off. Below `query`, `limits` and
`resharding`, which all retry, so none of them imports another for it."""

from dynashard.throttling.codes import (
    cancellation_codes,
    error_code,
    is_hot_key_throttling,
    is_throttling,
    throttling_reasons,
)
from dynashard.throttling.retry import RetryPolicy

__all__ = [
    "RetryPolicy",
    "cancellation_codes",
    "error_code",
    "is_hot_key_throttling",
    "is_throttling",
    "throttling_reasons",
]
