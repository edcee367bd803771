"""Quotas kept in the table (`dynashard.limits.rate_limit`, issue 39's rate limiter), on DynamoDB
Local: a quota admits exactly its limit however many threads race for it, refills at its
pace, spread over shards never admits more, and says so in the draft-11 headers."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest

from dynashard import RateLimits, RatePolicy, Table, TableSchema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration
SCHEMA = TableSchema("PK", "SK")
NOW = 1_800_000_000.0
tenants = itertools.count()


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def table(module_table: str) -> str:
    return module_table


def test_a_quota_admits_exactly_its_limit_to_racing_threads(
    dynamodb: DynamoDBClient, table: str
) -> None:
    clock = Clock()
    limits = RateLimits(Table(dynamodb, table, SCHEMA), clock=clock)
    policy = RatePolicy("account", limit=50, window_seconds=60)
    tenant = f"tenant_{next(tenants)}"
    with ThreadPoolExecutor(8) as pool:
        decisions = list(pool.map(lambda _: limits.take(tenant, "api", policy), range(80)))
    admitted = [d for d in decisions if d.allowed]
    assert len(admitted) == 50, "the quota, whatever the race"
    refused = [d for d in decisions if not d.allowed]
    assert {d.retry_after for d in refused} == {2}, "one interval (1.2 s), rounded up"
    assert sorted(d.remaining for d in admitted) == list(range(50)), "each answer counts down"


def test_a_spent_quota_refills_at_its_pace(dynamodb: DynamoDBClient, table: str) -> None:
    clock = Clock()
    limits = RateLimits(Table(dynamodb, table, SCHEMA), clock=clock)
    policy = RatePolicy("alerts", limit=10, window_seconds=10)
    tenant = f"tenant_{next(tenants)}"
    assert all(limits.take(tenant, "k", policy).allowed for _ in range(10))
    refused = limits.take(tenant, "k", policy)
    assert (refused.allowed, refused.retry_after) == (False, 1)
    clock.now += 1  # one interval: one request
    assert limits.take(tenant, "k", policy).allowed
    assert not limits.take(tenant, "k", policy).allowed
    clock.now += 60  # idle: the whole quota again, not more
    assert sum(limits.take(tenant, "k", policy).allowed for _ in range(15)) == 10


def test_another_tenant_or_key_has_its_own_quota(dynamodb: DynamoDBClient, table: str) -> None:
    limits = RateLimits(Table(dynamodb, table, SCHEMA), clock=Clock())
    policy = RatePolicy("account", limit=3, window_seconds=60)
    storm, quiet = f"tenant_{next(tenants)}", f"tenant_{next(tenants)}"
    assert sum(limits.take(storm, "api", policy).allowed for _ in range(10)) == 3
    assert limits.take(quiet, "api", policy).allowed, "the storm's tenant is the one refused"
    assert limits.take(storm, "other-key", policy).allowed


def test_a_sharded_quota_never_admits_more(dynamodb: DynamoDBClient, table: str) -> None:
    clock = Clock()
    limits = RateLimits(Table(dynamodb, table, SCHEMA), clock=clock)
    policy = RatePolicy("account", limit=64, window_seconds=60, shards=4)
    tenant = f"tenant_{next(tenants)}"
    with ThreadPoolExecutor(8) as pool:
        decisions = list(pool.map(lambda _: limits.take(tenant, "api", policy), range(200)))
    admitted = sum(d.allowed for d in decisions)
    assert 48 <= admitted <= 64, f"{admitted}: at most the quota, a shard's share early at worst"


def test_the_answer_carries_the_draft_11_headers(dynamodb: DynamoDBClient, table: str) -> None:
    limits = RateLimits(Table(dynamodb, table, SCHEMA), clock=Clock())
    policy = RatePolicy("account", limit=2, window_seconds=60)
    tenant = f"tenant_{next(tenants)}"
    first = limits.take(tenant, "api", policy).headers()
    assert first == {"RateLimit-Policy": '"account";q=2;w=60', "RateLimit": '"account";r=1;t=30'}
    limits.take(tenant, "api", policy)
    refused = limits.take(tenant, "api", policy).headers()
    assert refused == {
        "RateLimit-Policy": '"account";q=2;w=60',
        "RateLimit": '"account";r=0;t=30',
        "Retry-After": "30",
    }, "t is when the next request fits, as Retry-After says"


def test_t_is_the_seconds_until_more_not_until_whole(dynamodb: DynamoDBClient, table: str) -> None:
    """draft-11's ``t``: a client that waits it is admitted again (a minute's worth spent
    refills one request a second, so the next is a second away, not a minute)."""
    clock = Clock()
    limits = RateLimits(Table(dynamodb, table, SCHEMA), clock=clock)
    policy = RatePolicy("api", limit=60, window_seconds=60)
    tenant = f"tenant_{next(tenants)}"
    taken = [limits.take(tenant, "api", policy) for _ in range(60)]
    assert [d.headers()["RateLimit"] for d in taken[-2:]] == ['"api";r=1;t=1', '"api";r=0;t=1']
    refused = limits.take(tenant, "api", policy)
    assert (refused.allowed, refused.more_seconds, refused.retry_after) == (False, 1, 1)
    clock.now += refused.more_seconds
    assert limits.take(tenant, "api", policy).allowed, "waiting t seconds is enough"
    clock.now += 120
    whole = limits.take(tenant, "api", policy)
    assert whole.headers()["RateLimit"] == '"api";r=59;t=1', "one taken: it is back in 1 s"


def test_a_policy_that_cannot_be_kept_is_refused() -> None:
    with pytest.raises(ValueError, match="at least its 4 shards"):
        RatePolicy("account", limit=2, window_seconds=60, shards=4)


@pytest.mark.parametrize("gap_seconds", [0.01, 0.5, 5.0])
def test_one_process_pays_one_write_a_request_at_any_pace(
    dynamodb: DynamoDBClient, table: str, gap_seconds: float
) -> None:
    """Slower than the quota's pace (the bucket idle at each request), faster (busy), or
    around it: the TAT this process saw predicts the form, so no request needs a second
    write (before, a bucket always idle by the next request cost two writes each)."""
    clock = Clock()
    limits = RateLimits(Table(dynamodb, table, SCHEMA), clock=clock)
    policy = RatePolicy("api", limit=600, window_seconds=60)  # one every 0.1 s
    tenant = f"tenant_{next(tenants)}"
    writes: list[str] = []

    def count(model: object, **_: object) -> None:
        writes.append(getattr(model, "name", ""))

    dynamodb.meta.events.register("provide-client-params.dynamodb.UpdateItem", count)
    try:
        for _ in range(20):
            assert limits.take(tenant, "api", policy).allowed
            clock.now += gap_seconds
    finally:
        dynamodb.meta.events.unregister("provide-client-params.dynamodb.UpdateItem", count)
    assert len(writes) == 20, "one conditional write a request"
