"""The stage's rate limits, built once a container from its settings.

A person's API request takes one from its account's ``api`` bucket; an API key's takes one
from the key's own ``api-key`` bucket (a share of the account's quota), then one from the
``api-keys`` bucket all the account's keys share (as large as the people's, and apart from
it). An alert takes one from its integration key's ``integration`` bucket, then one from its
account's ``alerts`` bucket.
Each bucket is a `dynashard.RatePolicy` kept in the table (one conditional write a
request), spread over more items when its pace is more than one item should take.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from dynashard import RateLimits, RatePolicy, Table
from dynashard.limits import Decision
from incidents.errors import RateLimitedError
from incidents.table import TABLE_SCHEMA
from lambdas.http.responses import rate_limited_message
from lambdas.http.statuses import CountedRefusalError
from lambdas.runtime import dynamodb, table_name
from lambdas.settings import QuotaSettings, quota_settings

BUCKET_WRITES_PER_SECOND = 500
"""Writes a second one bucket item takes before the quota is spread over more (half of a
partition's 1,000)."""
WINDOW_SECONDS = 60


def per_minute(name: str, limit: int) -> RatePolicy:
    """`limit` requests a minute named `name`, on as many items as its pace needs."""
    shards = 1
    while limit / WINDOW_SECONDS / shards > BUCKET_WRITES_PER_SECOND and shards * 2 <= limit:
        shards *= 2
    return RatePolicy(name, limit, WINDOW_SECONDS, shards)


@dataclass(frozen=True)
class Quotas:
    """The policies of a stage."""

    api: RatePolicy
    api_key: RatePolicy
    api_keys: RatePolicy
    alerts: RatePolicy
    integration: RatePolicy

    @classmethod
    def of(cls, settings: QuotaSettings) -> Quotas:
        """The policies of `settings`."""
        return cls(
            api=per_minute("api", settings.api_requests),
            api_key=per_minute(
                "api-key", max(1, settings.api_requests * settings.api_key_percent // 100)
            ),
            api_keys=per_minute("api-keys", settings.api_requests),
            alerts=per_minute("alerts", settings.alerts),
            integration=per_minute("integration", settings.integration_alerts),
        )


@functools.cache
def quotas() -> Quotas:
    """The container's quotas, read from its environment once (tests clear the cache)."""
    return Quotas.of(quota_settings(os.environ))


@functools.cache
def rate_limits() -> RateLimits:
    """The container's limiter, on the stage's table."""
    return RateLimits(Table(dynamodb(), table_name(), TABLE_SCHEMA))


def admit(account: str, takes: list[tuple[str, RatePolicy]]) -> dict[str, str]:
    """Take one request from each (key, policy) of `account` in turn; the draft-11 headers
    of all of them, or a `RateLimitedError` with them naming the first that refuses (the
    buckets before it have spent one: a refused alert counts against its key, as a retry
    would)."""
    decisions: list[Decision] = []
    for key, policy in takes:
        decision = rate_limits().take(account, key, policy)
        if not decision.allowed:
            message = rate_limited_message(policy.name, policy.limit, decision.more_seconds)
            raise CountedRefusalError(RateLimitedError(message), _headers([*decisions, decision]))
        decisions.append(decision)
    return _headers(decisions)


def _headers(decisions: list[Decision]) -> dict[str, str]:
    """Several decisions' headers as the draft's lists; on a refusal, ``Retry-After`` is the
    longest wait of the quotas a retry would meet empty (a quota before the refusing one
    spent this request too, and may have nothing left for longer)."""
    merged: dict[str, list[str]] = {}
    for decision in decisions:
        for name, value in decision.headers().items():
            if name != "Retry-After":
                merged.setdefault(name, []).append(value)
    headers = {name: ", ".join(values) for name, values in merged.items()}
    if not all(decision.allowed for decision in decisions):
        headers["Retry-After"] = str(max(_wait(decision) for decision in decisions))
    return headers


def _wait(decision: Decision) -> int:
    """Seconds until `decision`'s quota admits one more request (0: it has some left)."""
    if decision.retry_after is not None:
        return decision.retry_after
    return decision.more_seconds if decision.remaining == 0 else 0
