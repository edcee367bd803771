"""Per-container resources: the DynamoDB client, the store, and the cursor secret.

Created on first use and reused by every invocation of a warm container. The cursor
secret comes from Secrets Manager through Powertools Parameters (cached for
``CURSOR_SECRET_MAX_AGE`` seconds); locally and in tests from ``CURSOR_SECRET``. Where a
function starts from a SnapStart snapshot, a restored container forgets them all
(`forget_resources`, decision 020).
"""

from __future__ import annotations

import functools
import os
import secrets
import warnings
from dataclasses import asdict
from typing import TYPE_CHECKING

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities import parameters
from botocore.config import Config

from dynashard import client_config
from dynashard.query import PageStats
from dynashard.resharding import GrowthEvent
from incidents.events_out.delivery_messages import DeliveryQueue
from incidents.events_out.endpoints import EndpointPolicy
from incidents.store import Store, build_store
from incidents.timers import firing
from incidents.timers.firing_queue import FiringQueue
from lambdas.settings import (
    DELIVERY_QUEUE_URL,
    TIMER_QUEUE_URL,
    ShardSettings,
    account_limits,
    allow_loopback,
    event_retention_days,
)
from lambdas.snapstart import after_restore

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodbstreams import DynamoDBStreamsClient
    from mypy_boto3_events import EventBridgeClient

MAX_WORKERS = 16
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)
"""Commands and team routes emit no metric; Powertools would warn on each such invocation."""
SHARDS = ShardSettings.from_environment(os.environ)
"""Read at cold start: a bad stage setting stops the container here, before any request."""
EVENT_RETENTION = event_retention_days(os.environ)
LIMITS = account_limits(os.environ)
logger = Logger(service="incidents")
tracer = Tracer(service="incidents")
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "Incidents"))


CONNECT_SECONDS = 1.0
READ_SECONDS = 3.0
"""A DynamoDB request answers in milliseconds; botocore's 60 s defaults would outlive the
function's 10 s timeout (and, locally, hang a worker on a dead engine): a request that
cannot connect in 1 s or answer in 3 s fails, and the standard retry mode tries it again
(3 attempts in all), so a dead engine is an error within about 10 s, not a hang."""


def client_settings() -> Config:
    """The container's client configuration: a pool for the fan-out's workers and those of
    timers fired in process (`FireHere`: tests and benchmarks on these clients), retries
    and timeouts."""
    timeouts = Config(connect_timeout=CONNECT_SECONDS, read_timeout=READ_SECONDS)
    return client_config(MAX_WORKERS + firing.WORKERS).merge(timeouts)


@functools.cache
def dynamodb() -> DynamoDBClient:
    """The container's DynamoDB client (``DYNAMODB_ENDPOINT`` points it at a local server)."""
    return boto3.client(
        "dynamodb",
        endpoint_url=os.environ.get("DYNAMODB_ENDPOINT") or None,
        config=client_settings(),
    )


def endpoint_policy() -> EndpointPolicy:
    """Where webhooks may point: public https (``make dev`` also allows this machine)."""
    return EndpointPolicy(allow_loopback=allow_loopback(os.environ))


@functools.cache
def delivery_queue() -> DeliveryQueue:
    """The webhook delivery queue (``DELIVERY_QUEUE_URL``; ``AWS_ENDPOINT_URL_SQS`` points
    the client at a local server, as boto3 reads it)."""
    return DeliveryQueue(
        boto3.client("sqs", config=client_settings()), os.environ[DELIVERY_QUEUE_URL]
    )


@functools.cache
def firing_queue() -> FiringQueue:
    """The timers' firing queue (``TIMER_QUEUE_URL``; ``AWS_ENDPOINT_URL_SQS`` points the
    client at a local server)."""
    return FiringQueue(boto3.client("sqs", config=client_settings()), os.environ[TIMER_QUEUE_URL])


@functools.cache
def streams() -> DynamoDBStreamsClient:
    """The container's DynamoDB Streams client (``DYNAMODB_ENDPOINT`` locally, which serves
    the table's stream too)."""
    return boto3.client(
        "dynamodbstreams",
        endpoint_url=os.environ.get("DYNAMODB_ENDPOINT") or None,
        config=client_settings(),
    )


@functools.cache
def eventbridge() -> EventBridgeClient:
    """The container's EventBridge client (``AWS_ENDPOINT_URL_EVENTBRIDGE`` locally)."""
    return boto3.client("events", config=client_settings())


def table_name() -> str:
    """The single table's name, from ``TABLE_NAME``."""
    return os.environ["TABLE_NAME"]


def cursor_secret() -> bytes:
    """The key cursors are signed with."""
    arn = os.environ.get("CURSOR_SECRET_ARN")
    if arn:
        max_age = int(os.environ.get("CURSOR_SECRET_MAX_AGE", "300"))
        secret = parameters.get_secret(arn, max_age=max_age)
        return secret.encode() if isinstance(secret, str) else bytes(secret)
    return os.environ["CURSOR_SECRET"].encode()


def store() -> Store:
    """The container's store; a rotated cursor secret gives a new one."""
    return _store_for(table_name(), cursor_secret())


@functools.cache
def store_without_cursors() -> Store:
    """A store for a function that pages no list (the publisher): it never reads the cursor
    secret; the key it holds is random, so a cursor it made would be refused anywhere.
    Built beside `store`'s, not in its one-entry cache (the local pipeline uses both)."""
    return _built_store(table_name(), secrets.token_bytes(32))


@functools.lru_cache(maxsize=1)
def _store_for(table: str, secret: bytes) -> Store:
    return _built_store(table, secret)


def _built_store(table: str, secret: bytes) -> Store:
    return build_store(
        dynamodb(),
        table,
        secret,
        config=SHARDS.shard_config(),
        participant_policy=SHARDS.participants(),
        on_growth=report_growth,
        max_workers=MAX_WORKERS,
        event_retention_days=EVENT_RETENTION,
        limits=LIMITS,
    )


@after_restore
def forget_resources() -> None:
    """Drop every per-container resource, so a restored container builds its own on first
    use: no connection, credential or cached secret (nor a secret's age) from the snapshot.

    None exists at snapshot time (each is built by the first request that needs it), so
    this costs a restore nothing; it keeps that true if init ever builds one. Credentials
    are resolved again by the next client: boto3's default session keeps those it found.
    """
    for cached in (
        dynamodb,
        delivery_queue,
        firing_queue,
        streams,
        eventbridge,
        store_without_cursors,
        _store_for,
    ):
        cached.cache_clear()
    parameters.clear_caches()  # type: ignore[no-untyped-call]  # its providers and their clients
    boto3.DEFAULT_SESSION = None


def report_growth(event: GrowthEvent) -> None:
    """dynashard's hook on a count's change: a structured log line and a metric (a growth,
    or a halving)."""
    grew = event.new_count > event.old_count
    message, metric = ("grew", "ShardCountGrowths") if grew else ("halved", "ShardCountHalvings")
    logger.warning(f"shard count {message}", extra={"shard_change": asdict(event)})
    metrics.add_metric(name=metric, unit=MetricUnit.Count, value=1)


def report_page(list_name: str, stats: PageStats) -> None:
    """Fan-out cost of one page of `list_name` as EMF metrics (dimension ``list``): streams
    and the contributing ones, requests, round trips, items read, RCUs, time, and whether
    the page's budget cut it short."""
    metrics.add_dimension(name="list", value=list_name)
    metrics.add_metric(name="FanOutStreams", unit=MetricUnit.Count, value=stats.streams)
    metrics.add_metric(name="FanOutContributors", unit=MetricUnit.Count, value=stats.contributors)
    metrics.add_metric(name="FanOutRequests", unit=MetricUnit.Count, value=stats.requests)
    metrics.add_metric(name="FanOutRoundTrips", unit=MetricUnit.Count, value=stats.round_trips)
    metrics.add_metric(name="FanOutItemsRead", unit=MetricUnit.Count, value=stats.items_read)
    metrics.add_metric(name="FanOutReadUnits", unit=MetricUnit.Count, value=stats.read_units)
    metrics.add_metric(
        name="FanOutMilliseconds", unit=MetricUnit.Milliseconds, value=stats.elapsed_ms
    )
    metrics.add_metric(name="FanOutBudgetSpent", unit=MetricUnit.Count, value=stats.budget_spent)
