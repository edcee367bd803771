"""A page's notifications, on DynamoDB Local and a simulated clock: decided from the page's
insert (as the stream hands it to the publisher) for each of its user's rules that applies
now, once however often the record comes again; then sent, each once, by email through SES
v2 (moto's server, which keeps what it sent) and to a Slack incoming webhook (a stand-in on
127.0.0.1 that answers as Slack does), retried while the provider may take it later and
failed at once when it refuses for good."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest

from incidents.contacts.deliverable import deliverable_methods
from incidents.contacts.messages import MessageStatus, OutgoingMessage
from incidents.contacts.models import (
    Channel,
)
from incidents.events_out.delivery_messages import Message, NotificationJob
from incidents.events_out.endpoints import EndpointPolicy
from incidents.incident.commands import update_incident
from incidents.keys import NOTIFICATION_PREFIX
from incidents.models import Status
from incidents.notifications import later
from incidents.notifications.channels import Carriers, Handed, SesEmail, SlackWebhook
from incidents.notifications.decisions import (
    decide_notifications,
    is_page_insert,
    notifications_of,
)
from incidents.notifications.delivery import ATTEMPTS, RETRY_SECONDS, deliver
from incidents.notifications.links import Links, read_link
from incidents.notifications.messages import page_message
from incidents.requests import UpdateIncident
from incidents.timeline.queries import stored_events
from lambdas import publisher, runtime
from local.api.call_log import RUNNING
from local.api.proxy_events import LocalLambdaContext
from local.events.messaging import PAGE_SENDER
from tests.helpers.api_harness import Api
from tests.helpers.paging_world import LOOPBACK, T0, World, jobs
from tests.helpers.providers import Slack, emails_sent
from tests.integration.test_stream_recovery import (  # noqa: F401 - a fixture
    on_failure,
    recover,
    recovering,
    stream_records,
)

pytestmark = pytest.mark.integration
SENDER = PAGE_SENDER
LINKS_URL = "https://api.example.com/prod"


@pytest.fixture
def ses(moto_endpoint: str) -> Any:
    client = boto3.client("sesv2", endpoint_url=moto_endpoint, region_name="us-east-1")
    client.create_email_identity(EmailIdentity=SENDER)  # moto verifies it at once
    return client


def test_a_page_decides_one_notification_per_rule_that_applies_once(world: World) -> None:
    incident, record = world.paged()
    assert is_page_insert(record)
    page = record["dynamodb"]["NewImage"]
    first = decide_notifications(world.store, page)
    assert sorted(n.channel for n in first) == [Channel.EMAIL, Channel.SLACK], (
        "the profile's email and the Slack webhook at 0 minutes; not the rule at 5 minutes, "
        "the low-urgency one, or the unverified method's"
    )
    world.now += timedelta(seconds=7)
    again = decide_notifications(world.store, page)  # the record retried
    assert [n.sort_key for n in again] == [n.sort_key for n in first]
    stored = notifications_of(world.store, world.bob.account_id, incident)
    assert len(stored) == 2, "decided once each"
    assert {n.decided_at for n in stored} == {n.decided_at for n in first}, "the first decision"
    assert all(n.sort_key.startswith(NOTIFICATION_PREFIX) for n in stored)
    assert {n.status for n in stored} == {MessageStatus.PENDING}


def test_each_notification_is_sent_once_by_email_and_to_slack(
    world: World, slack: Slack, ses: Any, moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    incident, record = world.paged()
    decided = decide_notifications(world.store, record["dynamodb"]["NewImage"])
    carriers: Carriers = {
        Channel.EMAIL: SesEmail(ses, SENDER),
        Channel.SLACK: SlackWebhook(LOOPBACK),
    }
    links = Links.of(LINKS_URL, b"links-secret-" * 3)
    for job in jobs(decided) * 2:  # every message delivered twice, as SQS may
        deliver(world.store, carriers, job, links)
    stored = {n.channel: n for n in notifications_of(world.store, world.bob.account_id, incident)}
    assert {n.status for n in stored.values()} == {MessageStatus.SENT}
    assert [n.attempts for n in stored.values()] == [1, 1], "the repeats found them sent"
    (posted,) = slack.bodies
    assert "disk full" in posted["text"]
    assert incident in posted["text"]
    (email,) = [m for m in emails_sent()
                if m.id == stored[Channel.EMAIL].message_id]  # fmt: skip
    assert (email.source, email.destinations["ToAddresses"]) == (SENDER, ["bob@example.com"])
    assert email.subject == "[#1] SEV1: disk full"
    assert incident in email.body
    (url,) = re.findall(rf"{LINKS_URL}/page-links/\S+", email.body)
    link = read_link(world.store, url.rsplit("/", 1)[1])
    assert (link.incident_id, link.user_id) == (incident, world.bob.user_id), "bound to both"
    assert link.page == stored[Channel.EMAIL].page
    assert "page-links" not in posted["text"], "a channel's readers would act as Bob"


def test_a_throttled_provider_is_tried_again_then_failed(world: World) -> None:
    _, record = world.paged()
    decided = decide_notifications(world.store, record["dynamodb"]["NewImage"])
    throttled = Throttled()
    carriers: Carriers = {Channel.EMAIL: throttled, Channel.SLACK: throttled}
    (job,) = [j for j, n in zip(jobs(decided), decided, strict=True)
              if n.channel is Channel.EMAIL]  # fmt: skip  # an email carries a link
    links = Links.of(LINKS_URL, b"links-secret-" * 3)
    waits = [deliver(world.store, carriers, job, links).retry_in for _ in range(ATTEMPTS)]
    assert waits == [*RETRY_SECONDS, None], "4 waits, then no more: failed"
    assert len(set(throttled.bodies)) == 1, "every try carries the same link"
    assert f"{LINKS_URL}/page-links/" in throttled.bodies[0]
    stored = notifications_of(world.store, world.bob.account_id, decided[0].incident_id)
    (after,) = [n for n in stored if n.sort_key == job.notification]
    assert (after.status, after.attempts, after.reason) == (
        MessageStatus.FAILED,
        5,
        "throttled",
    )
    assert deliver(world.store, carriers, job).status is None, "a failed one is not tried again"
    assert throttled.calls == ATTEMPTS


def test_slack_rate_limits_wait_its_retry_after_and_a_gone_webhook_fails_at_once(
    world: World, slack: Slack
) -> None:
    _, record = world.paged()
    decided = decide_notifications(world.store, record["dynamodb"]["NewImage"])
    (job,) = [j for j, n in zip(jobs(decided), decided, strict=True) if n.channel is Channel.SLACK]
    carriers: Carriers = {Channel.SLACK: SlackWebhook(LOOPBACK)}
    slack.answers = [(429, {"Retry-After": "42"}), (404, {})]
    limited = deliver(world.store, carriers, job)
    assert (limited.status, limited.retry_in) == (MessageStatus.PENDING, 42)
    gone = deliver(world.store, carriers, job)
    assert gone.status is MessageStatus.FAILED, "a 4xx other than 429 is never retried"
    assert len(slack.bodies) == 2


def test_a_channel_without_a_provider_and_a_stale_page_fail_saying_why(world: World) -> None:
    incident, record = world.paged()
    decided = decide_notifications(world.store, record["dynamodb"]["NewImage"])
    email, slack_job = sorted(
        jobs(decided), key=lambda j: j.contact_method_id != decided[0].contact_method_id
    )
    assert deliver(world.store, {}, email).status is MessageStatus.FAILED
    world.now += timedelta(hours=1)
    assert (
        deliver(world.store, {Channel.SLACK: Throttled()}, slack_job).status is MessageStatus.FAILED
    )
    reasons = sorted(
        n.reason or "" for n in notifications_of(world.store, world.bob.account_id, incident)
    )
    assert reasons[0].startswith("no provider for")
    assert reasons[1].startswith("stale")


class Throttled:
    """A provider that is always throttled."""

    def __init__(self) -> None:
        self.calls = 0
        self.bodies: list[str] = []

    def hand(self, message: OutgoingMessage) -> Handed:
        self.calls += 1
        self.bodies.append(message.body)
        return Handed(retry_after=0, reason="throttled")


@pytest.fixture
def queued(api: Api, monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    """The jobs the publisher queues, kept here. Its container's publisher of
    events is built first (in the API's environment), so that its cache keeps the real queue
    for the tests after."""
    publisher.publisher()
    sent: list[Message] = []
    monkeypatch.setattr(publisher, "delivery_queue", lambda: Sent(sent))
    return sent


def test_the_publisher_decides_a_pages_notifications_and_queues_each_decided(
    api: Api, slack: Slack, queued: list[Message], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The publisher's own path, as the stream runs it (its calls recorded as its own for
    the least-privilege check): a page's insert decides its notifications; each
    notification's insert is queued, once, in its contact method's group."""
    store = runtime.store()
    monkeypatch.setattr(store, "clock", store.clock)  # the world's clock, undone after
    world = World(store, slack.url)
    incident, record = world.paged()
    assert publish([record]) == {"batchItemFailures": []}
    stored = notifications_of(store, world.bob.account_id, incident)
    assert sorted(n.channel for n in stored) == [Channel.EMAIL, Channel.SLACK]
    inserts = [
        {**record, "dynamodb": {**record["dynamodb"], "NewImage": item}}
        for item in store.query_partition(f"{world.bob.account_id}#{incident}",
                                          prefix=NOTIFICATION_PREFIX)
    ]  # fmt: skip
    assert publish(inserts) == {"batchItemFailures": []}
    assert sorted(queued, key=str) == sorted(jobs(stored), key=str)
    assert {job.group() for job in queued} == {f"{n.contact_method_id}#notify" for n in stored}
    for job in jobs(stored):  # sent to Slack; failed by email (no provider here)
        deliver(store, {Channel.SLACK: SlackWebhook(LOOPBACK)}, job)
    settled = [
        {**record, "eventName": "MODIFY", "dynamodb": {**record["dynamodb"], "NewImage": item}}
        for item in store.query_partition(f"{world.bob.account_id}#{incident}",
                                          prefix=NOTIFICATION_PREFIX)
    ]  # fmt: skip
    assert publish(settled * 2) == {"batchItemFailures": []}
    logged = stored_events(store, world.bob.account_id, incident, 1)
    kinds = sorted(
        str(item["type"]["S"]) for item in logged if item["type"]["S"] != "incident.created"
    )
    assert kinds == ["escalation.level", "notification.failed", "notification.sent"], (
        "the page and each notification settled on the timeline, once"
    )
    inserted = [{**record, "dynamodb": {**record["dynamodb"], "NewImage": item}} for item in logged]
    assert publish(inserted) == {"batchItemFailures": []}, "each goes out as any event does"


def publish(records: list[dict[str, Any]]) -> Any:
    token = RUNNING.set("publisher")
    try:
        return publisher.handler({"Records": records}, LocalLambdaContext())
    finally:
        RUNNING.reset(token)


@dataclass
class Sent:
    """A delivery queue that keeps what it is sent."""

    messages: list[Message]

    def send(self, messages: list[Message]) -> None:
        self.messages += messages


LONDON_OFFICE = {"type": "fixed_time_per_day", "time_zone": "Europe/London",
                 "days_of_week": [1, 2, 3, 4, 5],
                 "start_time": "09:00:00", "end_time": "17:00:00"}  # fmt: skip
BY_OFFICE_HOURS = {"type": "use_support_hours",
                   "during_support_hours": {"type": "constant", "urgency": "high"},
                   "outside_support_hours": {"type": "constant", "urgency": "low"}}  # fmt: skip


@pytest.mark.parametrize(
    ("urgency", "at", "channels"),
    [
        ({"incident_urgency_rule": {"type": "constant", "urgency": "low"}}, T0, ["slack"]),
        ({"incident_urgency_rule": BY_OFFICE_HOURS, "support_hours": LONDON_OFFICE}, T0,
         ["email", "slack"]),  # Monday 11:00 in London (BST): during
        ({"incident_urgency_rule": BY_OFFICE_HOURS, "support_hours": LONDON_OFFICE},
         T0 + timedelta(hours=7), ["slack"]),  # 18:00 in London: outside
    ],
    ids=["low", "during support hours", "outside support hours"],
)  # fmt: skip
def test_an_integration_s_urgency_chooses_the_rules_that_page(
    world: World, urgency: dict[str, Any], at: datetime, channels: list[str]
) -> None:
    """Bob's rules: email and Slack at 0 minutes for high urgency, Slack for low."""
    world.now = at
    incident, record = world.paged(**urgency)
    decided = decide_notifications(world.store, record["dynamodb"]["NewImage"])
    assert sorted(n.channel.value for n in decided) == channels
    (slack_rule,) = [n.rule_id for n in decided if n.channel is Channel.SLACK]
    assert slack_rule == (world.low_slack if channels == ["slack"] else world.high_slack)
    world.at(at - T0 + timedelta(minutes=5))  # the later rule due
    later = {n.rule_id for n in notifications_of(world.store, world.bob.account_id, incident)}
    assert (world.later in later) == (channels != ["slack"]), "a later rule of its urgency only"


def test_a_rule_with_a_delay_notifies_once_after_it(world: World) -> None:
    incident, record = world.paged()
    decide_notifications(world.store, record["dynamodb"]["NewImage"])
    at_once = world.notified(incident)
    assert len(at_once) == 2
    world.at(timedelta(minutes=4, seconds=50))
    assert world.notified(incident) == at_once, "the 5-minute rule waits"
    world.at(timedelta(minutes=5, seconds=40))
    later = [n for n in world.notified(incident) if n not in at_once]
    assert later == [(Channel.SLACK, world.later)], "once its delay has passed"
    decide_notifications(world.store, record["dynamodb"]["NewImage"])  # retried
    world.at(timedelta(minutes=6, seconds=40))
    assert len(world.notified(incident)) == 3, "a page's record retried decides nothing twice"


@pytest.mark.parametrize("triggered_again", [False, True], ids=["acknowledged", "started over"])
def test_a_stop_before_the_delay_stops_the_later_rule(world: World, triggered_again: bool) -> None:
    """Acknowledged at 2 minutes (and triggered again at 3: a new start, whose own page
    notifies anew): the first page's 5-minute rule notifies nobody, and its timer is gone."""
    incident, record = world.paged()
    decide_notifications(world.store, record["dynamodb"]["NewImage"])
    world.now = T0 + timedelta(minutes=2)
    update_incident(world.store, world.bob, incident, UpdateIncident(status=Status.ACKNOWLEDGED))
    if triggered_again:
        world.now = T0 + timedelta(minutes=3)
        update_incident(world.store, world.bob, incident, UpdateIncident(status=Status.TRIGGERED))
    for minute in (6, 7):
        world.at(timedelta(minutes=minute))
    assert len(world.notified(incident)) == 2, "only the first page's at-once rules"


@pytest.mark.parametrize("triggered_again", [False, True], ids=["acknowledged", "started over"])
def test_a_stop_racing_the_firing_wins(
    world: World, monkeypatch: pytest.MonkeyPatch, triggered_again: bool
) -> None:
    """Acknowledged (and triggered again: a new start) after the firing read the incident
    paging and before its transaction: the transaction's checks refuse the notification;
    the timer stays due and its next firing sees the change."""
    incident, record = world.paged()
    decide_notifications(world.store, record["dynamodb"]["NewImage"])
    reads = deliverable_methods

    def stopped_meanwhile(*arguments: Any) -> Any:
        found = reads(*arguments)
        for status in [Status.ACKNOWLEDGED, *([Status.TRIGGERED] if triggered_again else [])]:
            update_incident(world.store, world.bob, incident, UpdateIncident(status=status))
        monkeypatch.setattr(later, "deliverable_methods", reads)
        return found

    monkeypatch.setattr(later, "deliverable_methods", stopped_meanwhile)
    world.at(timedelta(minutes=6))
    world.at(timedelta(minutes=7))
    assert len(world.notified(incident)) == 2, "only the at-once rules"


def test_a_page_handled_late_notifies_after_its_delay_and_not_once_it_stopped(
    world: World,
) -> None:
    """The page's record handled 9 minutes after the page (retries, a recovered batch): the
    5-minute rule's timer is due at once, not in a minute the sweep has passed; the record
    handled again once the incident was acknowledged decides nothing."""
    incident, record = world.paged()
    world.now = T0 + timedelta(minutes=9)
    decide_notifications(world.store, record["dynamodb"]["NewImage"])
    world.at(timedelta(minutes=10))
    assert len(world.notified(incident)) == 3, "the later rule too, at the next sweep"
    other, again = world.paged("db-2")
    update_incident(world.store, world.bob, other, UpdateIncident(status=Status.ACKNOWLEDGED))
    assert decide_notifications(world.store, again["dynamodb"]["NewImage"]) == []
    world.at(timedelta(minutes=20))
    assert world.notified(other) == [], "acknowledged before its record: nobody notified"


def test_slack_text_is_shown_as_written_and_a_refused_url_fails_at_once(
    world: World, slack: Slack
) -> None:
    _, record = world.paged(summary="<!channel> disk & <https://evil.example|db>")
    decided = decide_notifications(world.store, record["dynamodb"]["NewImage"])
    (job,) = [j for j, n in zip(jobs(decided), decided, strict=True) if n.channel is Channel.SLACK]
    public_only = {Channel.SLACK: SlackWebhook(EndpointPolicy())}
    refused = deliver(world.store, public_only, job)
    assert refused.status is MessageStatus.FAILED, "refused again on any try"
    assert slack.bodies == []
    (posted,) = [n for n in decided if n.channel is Channel.SLACK]
    text = page_message(world.store, posted).body
    assert "&lt;!channel&gt; disk &amp; &lt;https://evil.example|db&gt;" in text


@pytest.mark.usefixtures("recovering")
def test_stream_recovery_decides_the_notifications_of_a_page_given_up(
    api: Api,
    slack: Slack,
    queued: list[Message],
    monkeypatch: pytest.MonkeyPatch,
    dynamodb_endpoint: str,
) -> None:
    """A stream batch the publisher gave up on, holding a page, is published again by
    stream recovery (its calls recorded as its own): the page's notifications are decided,
    and queued from their own inserts."""
    store = runtime.store()
    monkeypatch.setattr(store, "clock", store.clock)  # the world's clock, undone after
    world = World(store, slack.url)
    incident, _ = world.paged()
    arn, shards = stream_records(dynamodb_endpoint, world.bob.account_id)
    assert recover([on_failure(arn, shard, records) for shard, records in shards.items()]) == []
    stored = notifications_of(store, world.bob.account_id, incident)
    assert sorted(n.channel for n in stored) == [Channel.EMAIL, Channel.SLACK]
    arn, shards = stream_records(dynamodb_endpoint, world.bob.account_id)
    assert recover([on_failure(arn, shard, records) for shard, records in shards.items()]) == []
    notified = [job for job in queued if isinstance(job, NotificationJob)]  # not the codes
    assert sorted(notified, key=str) == sorted(jobs(stored), key=str), "once each"
