"""The delivery contract end to end on DynamoDB Local's stream: a change commits, the stream
carries its event to the publisher, the delivery queue (FIFO, on moto) to the sender, and
a receiver verifies the signature with the `standardwebhooks` package. The pipeline is the
one ``make dev`` runs (`local.events.event_pipeline`) around the real handlers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from incidents.store import Caller, new_id
from lambdas import sender
from local.events.event_pipeline import pipeline_pollers, running
from local.events.messaging import Messaging
from local.webhook_receiver import Receiver, serving
from tests.helpers.api_harness import Api
from tests.helpers.deliveries import (
    add_note,
    assert_duplicates_share_their_id,
    assert_ordered_per_incident,
    event_of,
    new_incident,
    register,
    wait_for,
)
from tests.helpers.people import new_api_user
from tests.integration.conftest import API_TABLE

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pipeline(api: Api, messaging: Messaging, dynamodb_endpoint: str) -> Iterator[None]:
    with running(pipeline_pollers(dynamodb_endpoint, API_TABLE, messaging.queue_url)):
        yield


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A retry schedule of seconds (the real one's first retry is after 5 s, then 30 s)."""
    monkeypatch.setattr(sender.sender(), "delays", (1, 1, 1, 1, 1, 1))


def test_every_change_is_delivered_signed_in_order_with_the_summary_after_it(
    api: Api, pipeline: None, alice: Caller
) -> None:
    receiver = Receiver(secrets=[])
    with serving(receiver) as url:
        hook = register(api, alice, receiver, url)
        incident = new_incident(api, alice)
        path = {"incident_id": incident}
        assert (
            api.call("update_incident", alice, path, body={"status": "ACKNOWLEDGED"}).status == 200
        )
        add_note(api, alice, incident, "rolled back")
        assert api.call("resolve_incident", alice, path).status == 200
        wait_for(lambda: len(receiver.accepted()) >= 4)
    got = receiver.received
    assert all(delivery.verified for delivery in got)
    assert [event_of(d)["seq"] for d in got] == [1, 2, 3, 4]
    assert [d.body["type"] for d in got] == [
        "incident.created",
        "incident.updated",
        "note.added",
        "incident.resolved",
    ]
    timeline = api.call("incident_timeline", alice, path).body["items"]
    for delivery, event in zip(got, timeline, strict=True):
        assert delivery.webhook_id == event["id"] == delivery.headers["webhook-id"]
        assert delivery.body["timestamp"] == event["at"]
        assert delivery.body["data"]["account_id"] == alice.account_id
        assert event_of(delivery) == event  # one representation: nulls included
        assert delivery.body["data"]["incident"]["version"] == event["version"]
        assert delivery.headers["webhook-signature"].startswith("v1,")
    statuses = [d.body["data"]["incident"]["status"] for d in got]
    assert statuses == ["TRIGGERED", "ACKNOWLEDGED", "ACKNOWLEDGED", "RESOLVED"]
    log = api.call("list_deliveries", alice, {"webhook_id": hook}).body["items"]
    assert [(e["seq"], e["status"], e["response_status"], e["attempt"]) for e in log] == [
        (4, "succeeded", 204, 1),
        (3, "succeeded", 204, 1),
        (2, "succeeded", 204, 1),
        (1, "succeeded", 204, 1),
    ]


def test_a_webhook_gets_only_the_types_it_asked_for(
    api: Api, pipeline: None, alice: Caller
) -> None:
    notes, every = Receiver(secrets=[]), Receiver(secrets=[])
    with serving(notes) as notes_url, serving(every) as every_url:
        register(api, alice, notes, notes_url, event_types=["note.added"])
        register(api, alice, every, every_url)
        incident = new_incident(api, alice)
        add_note(api, alice, incident, "one")
        wait_for(lambda: len(every.accepted()) >= 2 and len(notes.accepted()) >= 1)
        time.sleep(0.5)
    assert [d.body["type"] for d in notes.received] == ["note.added"]


def test_another_accounts_webhooks_get_nothing(api: Api, pipeline: None, alice: Caller) -> None:
    mine, theirs = Receiver(secrets=[]), Receiver(secrets=[])
    bob = Caller(new_id("acct"), new_id("user"))
    with serving(mine) as mine_url, serving(theirs) as theirs_url:
        register(api, alice, mine, mine_url)
        register(api, bob, theirs, theirs_url)
        new_incident(api, alice)
        wait_for(lambda: len(mine.accepted()) >= 1)
        time.sleep(0.5)
    assert theirs.received == []


def test_a_failing_endpoint_gets_every_event_in_order_once_it_recovers(
    api: Api, pipeline: None, alice: Caller, quick_retries: None
) -> None:
    recovers_at = time.time() + 3
    receiver = Receiver(secrets=[], answer=lambda _: 500 if time.time() < recovers_at else 204)
    with serving(receiver) as url:
        hook = register(api, alice, receiver, url)
        incidents = [new_incident(api, alice, f"incident {n}") for n in range(3)]
        for incident in incidents:
            add_note(api, alice, incident, "a")
            add_note(api, alice, incident, "b")
        wait_for(lambda: len({d.webhook_id for d in receiver.accepted()}) >= 9, 40)
    got = receiver.received
    assert any(d.status == 500 for d in got)
    assert_ordered_per_incident(got)
    assert_duplicates_share_their_id(got)
    log = api.call("list_deliveries", alice, {"webhook_id": hook}, query={"limit": ["100"]})
    pending = [e for e in log.body["items"] if e["status"] == "pending"]
    assert pending
    assert all(e["response_status"] == 500 and e["next_attempt_at"] > e["at"] for e in pending)


def test_a_delivery_failing_every_attempt_is_given_up_and_the_next_goes_out(
    api: Api, pipeline: None, alice: Caller, quick_retries: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sender.sender(), "delays", (1, 1))
    refuses_first = Receiver(
        secrets=[], answer=lambda got: 500 if event_of(got)["seq"] == 1 else 204
    )
    with serving(refuses_first) as url:
        hook = register(api, alice, refuses_first, url)
        incident = new_incident(api, alice)
        add_note(api, alice, incident, "after the failure")
        wait_for(lambda: len(refuses_first.accepted()) >= 1, 30)
    assert [event_of(d)["seq"] for d in refuses_first.received] == [1, 1, 1, 2]
    log = api.call("list_deliveries", alice, {"webhook_id": hook}).body["items"]
    first = sorted((e for e in log if e["seq"] == 1), key=lambda e: e["attempt"])
    assert [(e["attempt"], e["status"]) for e in first] == [
        (1, "pending"),
        (2, "pending"),
        (3, "failed"),
    ]
    assert first[-1]["next_attempt_at"] is None


def test_the_test_route_sends_a_signed_test_event(api: Api, pipeline: None, alice: Caller) -> None:
    receiver = Receiver(secrets=[])
    with serving(receiver) as url:
        hook = register(api, alice, receiver, url, event_types=["note.added"])
        queued = api.call("test_webhook", alice, {"webhook_id": hook})
        assert queued.status == 202
        wait_for(lambda: len(receiver.accepted()) >= 1)
    delivery = receiver.received[0]
    assert delivery.body["type"] == "webhook.test"
    assert delivery.webhook_id == queued.body["id"]
    assert delivery.body["data"]["webhook_id"] == hook


def test_a_replay_delivers_the_events_since_again_in_order(
    api: Api, pipeline: None, alice: Caller
) -> None:
    receiver = Receiver(secrets=[])
    with serving(receiver) as url:
        hook = register(api, alice, receiver, url)
        incident = new_incident(api, alice)
        add_note(api, alice, incident, "one")
        add_note(api, alice, incident, "two")
        wait_for(lambda: len(receiver.accepted()) >= 3)
        since = receiver.received[1].body["timestamp"]
        replay = api.call("replay_webhook", alice, {"webhook_id": hook}, body={"since": since})
        assert replay.status == 202
        assert replay.body["id"].startswith("rpl_")
        wait_for(lambda: len(receiver.accepted()) >= 5)
    seqs = [event_of(d)["seq"] for d in receiver.received]
    assert seqs == [1, 2, 3, 2, 3]
    assert_duplicates_share_their_id(receiver.received)


def test_rotation_signs_with_both_secrets_for_a_day(
    api: Api, pipeline: None, alice: Caller
) -> None:
    old_only, new_only = Receiver(secrets=[]), Receiver(secrets=[])
    with serving(old_only) as url:
        hook = register(api, alice, old_only, url)
        rotated = api.call("rotate_webhook_secret", alice, {"webhook_id": hook}).body
        new_only.secrets.append(rotated["secret"])
        new_incident(api, alice)
        wait_for(lambda: len(old_only.accepted()) >= 1)
    delivery = old_only.received[0]
    assert len(delivery.headers["webhook-signature"].split(" ")) == 2
    raw = json.dumps(delivery.body, separators=(",", ":"), ensure_ascii=False).encode()
    assert new_only.verify(delivery.headers, raw)


def test_every_event_also_goes_to_the_event_bus(
    api: Api, pipeline: None, alice: Caller, messaging: Messaging
) -> None:
    events = boto3.client("events", endpoint_url=messaging.endpoint, region_name="us-east-1")
    sqs = boto3.client("sqs", endpoint_url=messaging.endpoint, region_name="us-east-1")
    tap = sqs.create_queue(QueueName=f"tap-{new_id('q')[-8:]}")["QueueUrl"]
    tap_arn = sqs.get_queue_attributes(QueueUrl=tap, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    rule = f"sev-{new_id('r')[-8:]}"
    pattern = {"source": ["incidents"], "detail": {"data": {"account_id": [alice.account_id]}}}
    events.put_rule(Name=rule, EventBusName=messaging.bus_name, EventPattern=json.dumps(pattern))
    events.put_targets(
        Rule=rule, EventBusName=messaging.bus_name, Targets=[{"Id": "tap", "Arn": tap_arn}]
    )
    incident = new_incident(api, alice)
    got: list[dict[str, object]] = []

    def arrived() -> bool:
        messages = sqs.receive_message(QueueUrl=tap, MaxNumberOfMessages=10).get("Messages", [])
        got.extend(json.loads(m["Body"]) for m in messages)
        return bool(got)

    wait_for(arrived, 20, "the bus")
    entry = got[0]
    assert (entry["source"], entry["detail-type"]) == ("incidents", "incident.created")
    detail = entry["detail"]
    assert isinstance(detail, dict)
    assert detail["type"] == "incident.created"
    assert detail["data"]["event"]["incident_id"] == incident
    assert detail["data"]["incident"]["id"] == incident


def test_a_schedule_s_handoff_is_delivered_and_listed_with_the_account_s_events(
    api: Api, pipeline: None
) -> None:
    """An override that starts now hands the schedule from its layer's user to another:
    one ``schedule.handoff`` event, in ``GET /events`` and to the webhook that asked for
    it, with the schedule's version and no incident."""
    alice = new_api_user(api, new_id("acct"), "Alice")
    bob = new_api_user(api, alice.account_id, "Bob")
    layer = {"name": "Primary", "start": "2026-01-05T00:00:00Z",
             "users": [{"user_id": alice.user_id}],
             "rotation_virtual_start": "2026-01-05T09:00:00Z",
             "rotation_turn_length_seconds": 7 * 86_400}  # fmt: skip
    created = api.call("create_schedule", alice, body={"name": "Payments", "time_zone": "UTC",
                                                       "schedule_layers": [layer]})  # fmt: skip
    schedule = created.body["id"]
    receiver = Receiver(secrets=[])
    with serving(receiver) as url:
        register(api, alice, receiver, url, event_types=["schedule.handoff"])
        now = datetime.now(UTC)
        override = {"start": now.isoformat(), "end": (now + timedelta(hours=1)).isoformat(),
                    "user_id": bob.user_id}  # fmt: skip
        made = api.call("create_override", alice, {"schedule_id": schedule}, body=override)
        assert made.status == 201, made.body
        wait_for(lambda: len(receiver.accepted()) >= 1)
        time.sleep(0.5)
    (delivery,) = receiver.received
    assert delivery.verified
    event = event_of(delivery)
    assert (delivery.body["type"], delivery.body["data"]["incident"]) == ("schedule.handoff", None)
    assert (event["previous_user_id"], event["user_id"]) == (alice.user_id, bob.user_id)
    assert event["schedule"] == {"id": schedule, "name": "Payments", "version": 2}
    listed = api.call("account_events", alice, query={"type": ["schedule.handoff"]}).body
    assert listed["items"] == [event]
