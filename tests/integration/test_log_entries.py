"""``GET /incidents/{id}/log-entries``: an incident paged, notified, acknowledged, noted and
resolved reads as PagerDuty's log entries, in the timeline's order, page by page, and only
by its own account; through the real handler, on DynamoDB Local."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.contacts.models import Channel
from incidents.keys import NOTIFICATION_PREFIX
from incidents.notifications.channels import Carriers, SlackWebhook
from incidents.notifications.decisions import decide_notifications
from incidents.notifications.delivery import deliver
from incidents.notifications.logged import log_notification, log_page
from incidents.store import Caller, new_id
from lambdas import runtime
from tests.helpers.api_harness import Api
from tests.helpers.paging_world import LOOPBACK, World, jobs
from tests.helpers.providers import Slack

pytestmark = pytest.mark.integration


@pytest.fixture
def paged(api: Api, slack: Slack, monkeypatch: pytest.MonkeyPatch) -> tuple[World, str]:
    """Bob paged at level 1, notified by Slack (sent) and email (no provider: failed), each
    on the timeline as the publisher writes them; then acknowledged, noted and resolved
    over HTTP."""
    store = runtime.store()
    monkeypatch.setattr(store, "clock", store.clock)  # the world's clock, undone after
    world = World(store, slack.url)
    incident, record = world.paged()
    page = record["dynamodb"]["NewImage"]
    decided = decide_notifications(store, page)
    log_page(store, page)
    carriers: Carriers = {Channel.SLACK: SlackWebhook(LOOPBACK)}
    for job in sorted(jobs(decided), key=lambda j: j.notification):
        deliver(store, carriers, job)
    pk = f"{world.bob.account_id}#{incident}"
    for item in sorted(store.query_partition(pk, prefix=NOTIFICATION_PREFIX),
                       key=lambda i: i["contact_method_id"]["S"]):  # fmt: skip
        log_notification(store, item)
    path = {"incident_id": incident}
    api.call("update_incident", world.bob, path, body={"status": "ACKNOWLEDGED"})
    api.call("add_note", world.bob, path, body={"text": "rolled back"})
    api.call("resolve_incident", world.bob, path)
    return world, incident


def entries(api: Api, who: Caller, incident: str, **query: list[str]) -> Any:
    reply = api.call("incident_log_entries", who, {"incident_id": incident}, query=query)
    assert reply.status == 200, reply.body
    return reply.body


def test_an_incident_s_log_reads_as_pagerduty_s_entries(api: Api, paged: tuple[World, str]) -> None:
    world, incident = paged
    listed = entries(api, world.bob, incident)["items"]
    kinds = [e["type"] for e in listed]
    assert kinds[:2] == ["trigger_log_entry", "assign_log_entry"]
    assert sorted(kinds[2:4]) == ["notify_log_entry"] * 2
    assert kinds[4:] == ["acknowledge_log_entry", "annotate_log_entry", "resolve_log_entry"]
    assigned = listed[1]
    assert assigned["assignees"] == [{"id": world.bob.user_id, "type": "user_reference"}]
    assert assigned["agent"]["type"] == "escalation_policy_reference"
    assert assigned["channel"] == {"type": "auto", "notification": None}
    assert assigned["event_details"]["level"] == 1
    assert assigned["event_details"]["policy_version"] == 1
    notified = {e["channel"]["notification"]["type"]: e for e in listed[2:4]}
    assert notified["slack_notification"]["channel"]["notification"]["status"] == "sent"
    failed = notified["email_notification"]["channel"]["notification"]
    assert (failed["status"], failed["reason"]) == ("failed", "no provider for email on this stage")
    assert notified["slack_notification"]["user"] == {"id": world.bob.user_id,
                                                      "type": "user_reference"}  # fmt: skip
    assert listed[0]["agent"]["type"] == "integration_reference", "the alert's integration"
    assert listed[4]["agent"] == {"id": world.bob.user_id, "type": "user_reference"}
    assert listed[5]["note"] == "rolled back"
    assert listed[0]["summary"] == "Triggered #1: disk full"
    assert {e["incident"]["id"] for e in listed} == {incident}
    assert len({e["id"] for e in listed}) == len(listed), "each entry one timeline event"


def test_the_log_pages_through_the_same_entries_both_ways(
    api: Api, paged: tuple[World, str]
) -> None:
    world, incident = paged
    whole = [e["id"] for e in entries(api, world.bob, incident)["items"]]
    walked: list[str] = []
    position: dict[str, list[str]] = {}
    while True:
        page = entries(api, world.bob, incident, limit=["2"], **position)
        walked += [e["id"] for e in page["items"]]
        if not page["has_more"]:
            break
        position = {"cursor": [page["next_cursor"]]}
    assert walked == whole
    newest = [e["id"] for e in entries(api, world.bob, incident, order=["desc"])["items"]]
    assert newest == whole[::-1]


def test_another_account_s_incident_has_no_log(api: Api, paged: tuple[World, str]) -> None:
    _, incident = paged
    stranger = Caller(new_id("acct"), new_id("user"))
    reply = api.call("incident_log_entries", stranger, {"incident_id": incident})
    assert reply.status == 404
