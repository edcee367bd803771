"""Paging on the incident's timeline, on DynamoDB Local: each person a level paged is an
``escalation.level`` event, each notification once settled a ``notification.sent`` or
``notification.failed`` event, written from the stream's records exactly once however
often a record comes or races, with the incident's events numbered without a gap."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from incidents.contacts.models import Channel
from incidents.incident.commands import add_note
from incidents.keys import NOTIFICATION_PREFIX
from incidents.models import EscalationPaged, EventType, NotificationOutcome, TimelineEvent
from incidents.notifications.channels import Carriers, SlackWebhook
from incidents.notifications.decisions import decide_notifications
from incidents.notifications.delivery import deliver
from incidents.notifications.logged import is_settled_notification, log_notification, log_page
from incidents.requests import AddNote
from incidents.timeline.events import event_from_item
from incidents.timeline.queries import stored_events
from tests.helpers.paging_world import LOOPBACK, World, jobs

pytestmark = pytest.mark.integration


def timeline(world: World, incident: str) -> list[TimelineEvent]:
    return [
        event_from_item(i) for i in stored_events(world.store, world.bob.account_id, incident, 1)
    ]


def modified(item: dict[str, Any]) -> dict[str, Any]:
    """A stream record of a change to `item` (the table's stream: new images only)."""
    stream = {"NewImage": item, "SequenceNumber": "2", "StreamViewType": "NEW_IMAGE"}
    return {"eventID": "2", "eventName": "MODIFY", "dynamodb": stream}


def test_each_person_a_level_pages_is_on_the_timeline_once(world: World) -> None:
    incident, record = world.paged()
    page = record["dynamodb"]["NewImage"]
    logged = log_page(world.store, page)
    assert isinstance(logged, EscalationPaged)
    assert logged.page.user_id == world.bob.user_id
    assert (logged.page.level, logged.page.loop) == (1, 0)
    assert logged.actor.user_id == logged.page.policy_id, "the policy paged"
    assert log_page(world.store, page) is None, "a record handled again writes nothing"
    events = timeline(world, incident)
    assert [e.seq for e in events] == list(range(1, len(events) + 1)), "no gap"
    assert [e.type for e in events].count(EventType.ESCALATION_LEVEL) == 1


def test_a_notification_settled_is_on_the_timeline_once_sent_or_failed(world: World) -> None:
    incident, record = world.paged()
    decided = decide_notifications(world.store, record["dynamodb"]["NewImage"])
    carriers: Carriers = {Channel.SLACK: SlackWebhook(LOOPBACK)}  # and no email provider
    for job in jobs(decided):
        deliver(world.store, carriers, job)
    items = world.store.query_partition(f"{world.bob.account_id}#{incident}",
                                        prefix=NOTIFICATION_PREFIX)  # fmt: skip
    records = [modified(item) for item in items]
    assert all(is_settled_notification(r) for r in records)
    logged = [log_notification(world.store, r["dynamodb"]["NewImage"]) for r in records]
    assert all(isinstance(e, NotificationOutcome) for e in logged)
    by_channel = {e.notification.channel: e for e in logged if isinstance(e, NotificationOutcome)}
    assert by_channel["slack"].type is EventType.NOTIFICATION_SENT
    assert by_channel["email"].type is EventType.NOTIFICATION_FAILED
    assert by_channel["email"].notification.reason == "no provider for email on this stage"
    assert by_channel["slack"].notification.reason is None
    assert {e.notification.level for e in by_channel.values()} == {1}
    assert [log_notification(world.store, r["dynamodb"]["NewImage"]) for r in records] == [
        None,
        None,
    ], "a record handled again writes nothing"
    marked = world.store.query_partition(f"{world.bob.account_id}#{incident}",
                                         prefix=NOTIFICATION_PREFIX)  # fmt: skip
    assert not any(is_settled_notification(modified(item)) for item in marked), (
        "the mark's own change is not a settling"
    )
    kinds = [e.type for e in timeline(world, incident)]
    assert kinds.count(EventType.NOTIFICATION_SENT) == kinds.count(EventType.NOTIFICATION_FAILED)
    assert kinds.count(EventType.NOTIFICATION_SENT) == 1


def test_a_pending_notification_is_not_settled(world: World) -> None:
    incident, record = world.paged()
    decide_notifications(world.store, record["dynamodb"]["NewImage"])
    items = world.store.query_partition(f"{world.bob.account_id}#{incident}",
                                        prefix=NOTIFICATION_PREFIX)  # fmt: skip
    assert not any(is_settled_notification(modified(item)) for item in items)


def test_records_racing_each_other_and_notes_write_one_event_each(world: World) -> None:
    """Eight copies of the page's record at once while people write notes: one
    ``escalation.level``, every note, and the events numbered without a gap or a repeat."""
    incident, record = world.paged()
    page = record["dynamodb"]["NewImage"]

    def race(turn: int) -> object:
        if turn % 2:
            return add_note(world.store, world.bob, incident, AddNote(text=f"note {turn}"))
        return log_page(world.store, page)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(race, range(16)))
    assert sum(isinstance(r, EscalationPaged) for r in results) == 1
    events = timeline(world, incident)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    kinds = [e.type for e in events]
    assert kinds.count(EventType.ESCALATION_LEVEL) == 1
    assert kinds.count(EventType.NOTE_ADDED) == 8
