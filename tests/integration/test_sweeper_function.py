"""The scheduled sweep as deployed (`lambdas.sweeper`, its firing queue drained by
`lambdas.timer_worker`), on the API's table: a heartbeat whose
expiry came due a minute ago is expired by one invocation, and not again by the next; an
incident whose integration's auto-resolve came due is resolved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest

from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.models import ALERT_EVENTS, NewIntegration
from incidents.heartbeats.commands import create_heartbeat, get_heartbeat
from incidents.heartbeats.models import HeartbeatStatus, NewHeartbeat
from incidents.incident.commands import load_summary
from incidents.models import Status
from incidents.requests import CreateTeam
from incidents.store import Caller, build_store, new_id
from incidents.team_commands import create_team
from lambdas import runtime, sweeper, timer_worker
from local.api.call_log import RUNNING
from local.api.proxy_events import LocalLambdaContext
from local.events.event_pipeline import QueuePoller
from local.events.messaging import REGION, Messaging
from tests.helpers.api_harness import Api
from tests.integration.conftest import API_TABLE

pytestmark = pytest.mark.integration


def run_the_function(messaging: Messaging) -> dict[str, int]:
    """One scheduled run, then its queue drained by the workers: what the run queued, and
    what the workers failed (left in the queue)."""
    token = RUNNING.set("sweeper")
    try:
        answer: dict[str, int] = sweeper.handler({}, LocalLambdaContext(timeout_seconds=120))
    finally:
        RUNNING.reset(token)
    sqs = boto3.client("sqs", endpoint_url=messaging.endpoint, region_name=REGION)
    workers = QueuePoller(sqs, messaging.timer_queue_url, timer_worker.handler, name="timer-worker")
    workers.drain()
    left = sqs.get_queue_attributes(
        QueueUrl=messaging.timer_queue_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]["ApproximateNumberOfMessagesNotVisible"]
    return {**answer, "failed": int(left)}


def test_the_scheduled_sweep_resolves_an_incident_its_alerts_stopped_for(
    api: Api, messaging: Messaging
) -> None:
    owner = Caller(new_id("acct"), new_id("user"))
    earlier = build_store(runtime.dynamodb(), API_TABLE, b"s" * 32)
    two_minutes_ago = datetime.now(UTC) - timedelta(minutes=2)
    earlier.clock = lambda: two_minutes_ago  # the alert then: its timeout a minute ago
    created = create_integration(
        earlier, owner, NewIntegration(name="cron", auto_resolve_timeout=60)
    )
    caller, integration = authenticate(earlier, created.key)
    alert = ALERT_EVENTS.validate_python(
        {"event_action": "trigger", "dedup_key": "db-1/disk",
         "payload": {"summary": "disk full", "source": "db-1", "severity": "error"}}
    )  # fmt: skip
    opened = ingest_alert(earlier, caller, integration, alert).incident_id
    assert opened is not None

    assert run_the_function(messaging)["failed"] == 0
    assert load_summary(earlier, owner, opened).status is Status.RESOLVED
    earlier.engine.close()


def test_the_scheduled_sweep_expires_a_late_heartbeat_once(api: Api, messaging: Messaging) -> None:
    owner = Caller(new_id("acct"), new_id("user"))
    earlier = build_store(runtime.dynamodb(), API_TABLE, b"s" * 32)
    two_minutes_ago = datetime.now(UTC) - timedelta(minutes=2)
    earlier.clock = lambda: two_minutes_ago  # created then: due a minute ago
    team = create_team(earlier, owner, CreateTeam(name="Backups"))  # the expiry is routed
    integration = create_integration(earlier, owner, NewIntegration(name="cron", team_id=team.id))
    request = NewHeartbeat(name="hourly-sync", interval=1, integration_id=integration.id)
    create_heartbeat(earlier, owner, request)

    assert run_the_function(messaging)["failed"] == 0
    expired = get_heartbeat(earlier, owner, "hourly-sync")
    assert expired.status is HeartbeatStatus.EXPIRED
    assert expired.incident_id is not None

    assert run_the_function(messaging)["failed"] == 0
    assert get_heartbeat(earlier, owner, "hourly-sync") == expired, "expired once"
    earlier.engine.close()
