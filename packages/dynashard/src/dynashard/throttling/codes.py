"""Throttling errors: recognise DynamoDB pushing back, and tell a hot key from other limits.

DynamoDB attaches ``ThrottlingReasons`` to its throttling errors. Only a key-range reason
(one partition of the table or of an index over its limit) is helped by more shards;
table, account and on-demand maximum limits are not, so growing shards for them would only
widen every later fan-out.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

THROTTLING_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
HOT_KEY_REASON_SUFFIX = "KeyRangeThroughputExceeded"


def is_throttling(error: BaseException) -> bool:
    """Whether `error` is DynamoDB pushing back on throughput."""
    return isinstance(error, ClientError) and error_code(error) in THROTTLING_CODES


def error_code(error: ClientError) -> str:
    """The DynamoDB error code of `error`, e.g. ``ConditionalCheckFailedException``."""
    return str(error.response.get("Error", {}).get("Code", "Unknown"))


def cancellation_codes(error: ClientError) -> list[str]:
    """Per operation of a cancelled transaction, in order, DynamoDB's code for why
    (``"None"`` for an operation that was fine); empty for any other error."""
    response: dict[str, Any] = dict(error.response)
    reasons: list[dict[str, Any]] = response.get("CancellationReasons") or []
    return [str(reason.get("Code", "None")) for reason in reasons]


def throttling_reasons(error: ClientError) -> list[str]:
    """The ``reason`` of each throttling reason DynamoDB attached (none from older servers).

    ``ThrottlingException`` spells the field ``throttlingReasons``; the others capitalise it.
    """
    response: dict[str, Any] = dict(error.response)
    reasons: list[dict[str, str]] = (
        response.get("ThrottlingReasons") or response.get("throttlingReasons") or []
    )
    return [str(reason.get("reason", "")) for reason in reasons]


def is_hot_key_throttling(error: BaseException) -> bool:
    """Whether `error` is throttling that more shards could relieve.

    True for a key-range reason (``TableWriteKeyRangeThroughputExceeded``,
    ``IndexWriteKeyRangeThroughputExceeded``, ...) and for throttling that carries no
    reasons at all, where a hot key is the likely cause and cannot be ruled out.
    """
    if not isinstance(error, ClientError) or not is_throttling(error):
        return False
    reasons = throttling_reasons(error)
    return not reasons or any(reason.endswith(HOT_KEY_REASON_SUFFIX) for reason in reasons)
