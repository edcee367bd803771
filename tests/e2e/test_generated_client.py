"""A client generated from the served document by software nobody here wrote
(openapi-python-client, pinned) runs the whole workflow against the local API: create,
retry with the same key, page to the end, update with If-Match, add and remove a
participant, resolve; and every error parses into the documented `ErrorBody`."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration
PACKAGE = "generated_incidents_client"


@pytest.fixture(scope="module")
def generated(
    local_api: LocalApi, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModuleType]:
    """The client package, generated from ``/openapi.json`` as served, then imported."""
    root = tmp_path_factory.mktemp("client")
    status, document = local_api.request("GET", "/openapi.json")
    assert status == 200
    (root / "openapi.json").write_text(json.dumps(document))
    tools = Path(sys.executable).parent
    done = subprocess.run(
        [str(tools / "openapi-python-client"), "generate", "--path", str(root / "openapi.json"),
         "--output-path", str(root / PACKAGE), "--meta", "none"],
        capture_output=True, text=True, check=False, cwd=root,
        env={**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))


class _Operations:
    """The generated modules of one tag, one an operation, imported on first use."""

    def __init__(self, tag: str) -> None:
        self._tag = tag

    def __getattr__(self, operation: str) -> Any:
        return importlib.import_module(f"{PACKAGE}.api.{self._tag}.{operation}")


def api(generated: ModuleType, tag: str) -> Any:
    return _Operations(tag)


def models(generated: ModuleType) -> Any:
    return importlib.import_module(f"{PACKAGE}.models")


def workflow(local_api: LocalApi, generated: ModuleType) -> tuple[Any, Any, Any, Any]:
    """The models, the incident operations and a client signed in as the first demo user."""
    me = generated.AuthenticatedClient(
        base_url=local_api.url, token=local_api.token(0, 0), prefix=""
    )
    commands = api(generated, "incident_commands")
    return models(generated), commands, api(generated, "incident_queries"), me


def test_the_workflow_through_a_generated_client(
    local_api: LocalApi, generated: ModuleType
) -> None:
    m, commands, queries, me = workflow(local_api, generated)
    colleague = local_api.user_id(0, 1)

    key = str(uuid.uuid4())
    body = m.CreateIncident(title="Checkout: 5xx spike", severity=m.Severity.SEV2)
    first = commands.create_incident.sync_detailed(client=me, body=body, idempotency_key=key)
    again = commands.create_incident.sync_detailed(client=me, body=body, idempotency_key=key)
    assert (first.status_code, again.status_code) == (201, 201)
    assert isinstance(first.parsed, m.Incident)
    incident = first.parsed.summary.id
    assert again.parsed.summary.id == incident, "a retry answers the same incident"

    seen: list[str] = []
    cursor: Any = generated.types.UNSET
    while True:
        page = queries.my_incidents.sync(client=me, limit=7, cursor=cursor)
        assert isinstance(page, m.IncidentList)
        seen += [item.id for item in page.items]
        if not page.has_more:
            break
        cursor = page.next_cursor
    assert incident in seen
    assert len(seen) == len(set(seen))

    update = m.UpdateIncident(status=m.Status.ACKNOWLEDGED)
    stale = commands.update_incident.sync_detailed(incident, client=me, body=update, if_match='"9"')
    assert stale.status_code == 412
    assert isinstance(stale.parsed, m.ErrorBody)
    updated = commands.update_incident.sync(incident, client=me, body=update, if_match='"1"')
    assert isinstance(updated, m.IncidentSummary)
    assert updated.version == 2

    joining = m.UserParticipant(participant_id=colleague, role=m.UserParticipantRole.RESPONDER)
    added = commands.add_participant.sync(incident, client=me, body=joining)
    assert isinstance(added, m.Participation)
    removed = commands.remove_participant.sync_detailed(incident, colleague, client=me)
    assert removed.status_code == 204
    resolved = commands.resolve_incident.sync(incident, client=me)
    assert resolved.status == m.Status.RESOLVED


def test_the_timeline_through_a_generated_client(
    local_api: LocalApi, generated: ModuleType
) -> None:
    m, commands, queries, me = workflow(local_api, generated)
    created = commands.create_incident.sync(client=me, body=m.CreateIncident(title="Queue backlog"))
    assert isinstance(created, m.Incident)
    incident = created.summary.id
    commands.update_incident.sync(
        incident, client=me, body=m.UpdateIncident(severity=m.Severity.SEV1)
    )
    commands.resolve_incident.sync(incident, client=me)

    key = str(uuid.uuid4())
    note = m.AddNote(text="Rolled back deploy 4812")
    noted = commands.add_note.sync_detailed(incident, client=me, body=note, idempotency_key=key)
    retried = commands.add_note.sync_detailed(incident, client=me, body=note, idempotency_key=key)
    assert (noted.status_code, retried.status_code) == (201, 201)
    assert isinstance(noted.parsed, m.NoteAdded)
    assert retried.parsed.id == noted.parsed.id, "a retried note is written once"
    story = queries.incident_timeline.sync(incident, client=me, limit=2)
    events: list[Any] = []
    while True:
        assert isinstance(story, m.EventList)
        events += story.items
        if not story.has_more:
            break
        story = queries.incident_timeline.sync(
            incident, client=me, limit=2, cursor=story.next_cursor
        )
    assert [str(e.type_) for e in events] == [
        "incident.created",
        "incident.updated",
        "incident.resolved",
        "note.added",
    ]
    assert [type(e) for e in events] == [
        m.IncidentCreated,
        m.IncidentChanged,
        m.IncidentChanged,
        m.NoteAdded,
    ]
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert events[1].changes.severity.to == m.Severity.SEV1
    assert events[1].changes.status is None
    assert events[-1].note.text == "Rolled back deploy 4812"
    feed = queries.account_events.sync(client=me, type_=[m.EventType.NOTE_ADDED], limit=5)
    assert isinstance(feed, m.EventFeed)
    assert feed.items[0].id == noted.parsed.id
    first_page = queries.account_events.sync_detailed(client=me, limit=5)
    tag = first_page.headers["etag"]
    again = queries.account_events.sync_detailed(client=me, limit=5, if_none_match=tag)
    assert (first_page.status_code, again.status_code) == (200, 304)
    story_tag = queries.incident_timeline.sync_detailed(incident, client=me).headers["etag"]
    assert story_tag == '"4"', "a timeline's ETag names its event counter"
    unchanged = queries.incident_timeline.sync_detailed(
        incident, client=me, if_none_match=story_tag
    )
    assert unchanged.status_code == 304


def test_webhooks_through_a_generated_client(local_api: LocalApi, generated: ModuleType) -> None:
    m, _, _, me = workflow(local_api, generated)
    hooks = api(generated, "webhooks")
    body = m.NewWebhook(
        url="https://hooks.example.com/incidents",
        event_types=[m.EventType.INCIDENT_CREATED],
        description="status page",
    )
    created = hooks.create_webhook.sync(client=me, body=body)
    assert isinstance(created, m.WebhookCreated)
    assert created.secret.startswith("whsec_")
    got = hooks.get_webhook.sync(created.id, client=me)
    assert isinstance(got, m.Webhook)
    assert (got.url, got.enabled, got.event_types) == (
        "https://hooks.example.com/incidents",
        True,
        [m.EventType.INCIDENT_CREATED],
    )
    off = hooks.update_webhook.sync(created.id, client=me, body=m.WebhookPatch(enabled=False))
    assert isinstance(off, m.Webhook)
    assert off.enabled is False
    rotated = hooks.rotate_webhook_secret.sync(created.id, client=me)
    assert isinstance(rotated, m.RotatedSecret)
    assert rotated.secret != created.secret
    listed = hooks.list_webhooks.sync(client=me, limit=100)
    assert isinstance(listed, m.WebhookList)
    assert created.id in [w.id for w in listed.items]
    replay = m.Replay(since=datetime(2026, 11, 24, tzinfo=UTC))
    queued = hooks.replay_webhook.sync_detailed(created.id, client=me, body=replay)
    assert queued.status_code == 202
    log = hooks.list_deliveries.sync(created.id, client=me)
    assert isinstance(log, m.DeliveryList)
    deleted = hooks.delete_webhook.sync_detailed(created.id, client=me)
    assert deleted.status_code == 204
    gone = hooks.get_webhook.sync_detailed(created.id, client=me)
    assert gone.status_code == 404
    assert isinstance(gone.parsed, m.ErrorBody)


def test_every_error_parses_into_the_documented_type(
    local_api: LocalApi, generated: ModuleType
) -> None:
    m = models(generated)
    commands = api(generated, "incident_commands")
    me = generated.AuthenticatedClient(
        base_url=local_api.url, token=local_api.token(0, 0), prefix=""
    )
    stranger = generated.AuthenticatedClient(base_url=local_api.url, token="dev-nobody", prefix="")
    missing = "inc_" + "0" * 27
    teams = api(generated, "teams")
    team = teams.create_team.sync(client=me, body=m.CreateTeam(name="Only me"))
    assert isinstance(team, m.Team)
    answers = {
        404: commands.get_incident.sync_detailed(missing, client=me),
        401: commands.get_incident.sync_detailed(missing, client=stranger),
        400: commands.get_incident_by_number.sync_detailed("0", client=me),
        409: teams.remove_member.sync_detailed(team.id, local_api.user_id(0, 0), client=me),
    }
    for status, answer in answers.items():
        assert answer.status_code == status, (status, answer.content)
        assert isinstance(answer.parsed, m.ErrorBody), (status, answer.content)
        assert answer.parsed.code
        assert answer.parsed.message


def test_every_delivered_body_parses_into_the_generated_models(
    local_api: LocalApi, generated: ModuleType, delivered_bodies: list[dict[str, Any]]
) -> None:
    """Issue 40: the document had no webhook payload, and ``TimelineEvent.from_dict`` of a
    delivered event failed on 7 of 7 (bodies left nulls out). Every body of every type now
    validates against the document's schema and parses into the generated models, with the
    fields its type promises."""
    m = models(generated)
    _, document = local_api.request("GET", "/openapi.json")
    kinds: dict[str, type] = {}
    for body in delivered_bodies:
        if body["type"] == "webhook.test":
            assert_valid(document, "TestPayload", body)
            test = m.TestPayload.from_dict(body)
            assert test.data.event_id == body["data"]["event_id"]
            continue
        assert_valid(document, "EventPayload", body)
        event = m.EventPayload.from_dict(body).data.event
        kinds[body["type"]] = type(event)
        sent = body["data"]["event"]
        assert (event.id, str(event.type_)) == (sent["id"], sent["type"])
        if isinstance(event, m.ScheduleHandoff):
            assert (event.schedule.version, event.user_id) == (
                sent["schedule"]["version"], sent["user_id"]
            )  # fmt: skip
            assert body["data"]["incident"] is None
            continue
        assert event.seq == sent["seq"]
        if isinstance(event, m.NoteAdded):
            assert event.note.text == sent["note"]["text"]
        if isinstance(event, m.IncidentChanged):
            assert event.changes.to_dict() == sent["changes"]
        if isinstance(event, m.AlertReceived):
            assert event.alert.to_dict() == sent["alert"]
        if isinstance(event, m.EscalationPaged):
            assert event.page.to_dict() == sent["page"]
        if isinstance(event, m.NotificationOutcome):
            assert event.notification.to_dict() == sent["notification"]
    assert kinds == {
        "incident.created": m.IncidentCreated,
        "incident.updated": m.IncidentChanged,
        "incident.resolved": m.IncidentChanged,
        "incident.reopened": m.IncidentChanged,
        "participant.added": m.ParticipantChanged,
        "participant.removed": m.ParticipantChanged,
        "alert.received": m.AlertReceived,
        "note.added": m.NoteAdded,
        "schedule.handoff": m.ScheduleHandoff,
        "escalation.level": m.EscalationPaged,
        "incident.escalated": m.IncidentEscalated,
        **dict.fromkeys(("notification.sent", "notification.delivered", "notification.failed"),
                        m.NotificationOutcome),
    }  # fmt: skip


def assert_valid(document: dict[str, Any], schema: str, body: dict[str, Any]) -> None:
    """`body` against the document's component `schema` (JSON Schema 2020-12, formats too)."""
    root = {**document, "$ref": f"#/components/schemas/{schema}"}
    validator = Draft202012Validator(root, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
    assert not errors, errors
