"""The local runtime as `make dev` runs it: a subprocess on a free port, reached over HTTP only.

It uses the test session's embedded DynamoDB (through ``DYNAMODB_ENDPOINT``, the variable
`make dev` offers for an external server), so tests can read the table for ground truth.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.models import EventType
from local.api.dev_process import DevServerError, dev_process
from local.openapi.webhooks import example_documents
from local.webhook_receiver import Receiver, serving
from tests.conftest import HandlerCalls
from tests.helpers.deliveries import wait_for

MEMORY_BOUND_MB = 400
"""What the local server may reach after the whole e2e suite (schemathesis included); the
engine is a separate JVM with a 1 GB heap cap, request bodies are capped at 10 MB."""


@dataclass(frozen=True)
class LocalApi:
    """The running local API, its dev tokens and its table."""

    url: str
    table: str
    accounts: list[dict[str, Any]]
    variables: dict[str, str]
    """The documented examples' shell variables, as ``make dev`` prints them."""

    def token(self, account: int, user: int) -> str:
        """Dev token of user `user` of account `account` (user 0 is in every team)."""
        token: str = self.accounts[account]["users"][user]["token"]
        return token

    def user_id(self, account: int, user: int) -> str:
        """Id of user `user` of account `account`."""
        user_id: str = self.accounts[account]["users"][user]["user_id"]
        return user_id

    def request(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """Status and JSON body (None if empty) of one HTTP request."""
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if token:
            all_headers["Authorization"] = token
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers=all_headers
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        return status, json.loads(text) if text else None


@pytest.fixture(scope="package")
def local_api(
    dynamodb_endpoint: str, tmp_path_factory: pytest.TempPathFactory, handler_calls: HandlerCalls
) -> Iterator[LocalApi]:
    """``python -m local.dev`` with 150 demo incidents, shared by the end-to-end tests (each
    uses an account or data of its own); stopped with Ctrl-C (SIGINT) once they are done,
    which must end it cleanly (its pollers would otherwise keep the engine busy for the rest
    of the run)."""
    table = f"e2e-{os.getpid()}"
    workdir = tmp_path_factory.mktemp("local-api")
    settings = {
        "AWS_CALL_LOG": str(handler_calls.log_file(f"local-api-{table}")),
        "DYNAMODB_ENDPOINT": dynamodb_endpoint,
        "TABLE_NAME": table,
        "DEMO_INCIDENTS": "150",
        "CURSOR_SECRET": "e2e-cursor-secret-0123456789abcdef0123",
    }
    try:
        with dev_process(workdir, settings) as running:
            yield LocalApi(running.url, table, running.accounts, running.variables)
            peak = running.peak_rss_mb()
            assert running.interrupt() == 0, running.log_tail()
            assert peak < MEMORY_BOUND_MB, f"local.dev peaked at {peak:.0f} MB"
    except DevServerError as error:
        pytest.fail(str(error))


@contextmanager
def receiving(local_api: LocalApi, token: str) -> Iterator[tuple[Receiver, dict[str, Any]]]:
    """A verifying receiver on a free port, and a webhook of the token's account to it."""
    receiver = Receiver(secrets=[])
    with serving(receiver) as url:
        status, hook = local_api.request("POST", "/webhooks", token, {"url": url})
        assert status == 201, hook
        receiver.secrets.append(hook["secret"])
        yield receiver, hook


PAGED_BY_EXAMPLE = frozenset({
    EventType.ESCALATED, EventType.ESCALATION_LEVEL, EventType.NOTIFICATION_SENT,
    EventType.NOTIFICATION_DELIVERED, EventType.NOTIFICATION_FAILED,
})  # fmt: skip
"""Types no story of ``make dev`` delivers within the wait: an escalation needs an incident
opened with a policy, a page waits for the sweep's minute, a notification for a verified
method, a receipt for a provider that sends one (moto's SES and the stand-ins send none).
Their bodies are the document's examples, which the code that writes bodies wrote
(`local.openapi.webhooks`); the integration suites deliver them for real."""


@pytest.fixture(scope="package")
def delivered_bodies(local_api: LocalApi) -> list[dict[str, Any]]:
    """The verified bodies a webhook receives for one incident's whole story (one event of
    every type but paging's, `PAGED_BY_EXAMPLE`) and a test delivery, then the examples of
    paging's: what a consumer's generated types must parse."""
    token = local_api.token(1, 0)
    with receiving(local_api, token) as (receiver, hook):
        colleague = local_api.user_id(1, 1)
        for method, path, body in story(local_api, token, colleague):
            status, answer = local_api.request(method, path, token, body)
            assert status < 300, (method, path, answer)
        for method, path, body, who in alerts(local_api, token):
            status, answer = local_api.request(method, path, who, body)
            assert status < 300, (method, path, answer)
        status, _ = local_api.request("POST", f"/webhooks/{hook['id']}/test", token)
        assert status == 202
        wanted = {*EventType, "webhook.test"} - PAGED_BY_EXAMPLE
        wait_for(lambda: {r.body["type"] for r in receiver.accepted()} >= wanted, 20, "every type")
        local_api.request("DELETE", f"/webhooks/{hook['id']}", token)
    examples = example_documents("bodies")
    paged = [examples[kind.value] for kind in sorted(PAGED_BY_EXAMPLE)]
    return [*(delivery.body for delivery in receiver.accepted()), *paged]


def alerts(local_api: LocalApi, token: str) -> Iterator[tuple[str, str, Any, str]]:
    """An integration's two alerts of one key: the second joins the first's incident (an
    ``alert.received``); each request with whose ``Authorization`` it is sent."""
    status, integration = local_api.request("POST", "/integrations", token, {"name": "story"})
    assert status == 201, integration
    bearer = f"Bearer {integration['key']}"
    for summary in ("disk 95% full", "disk 97% full"):
        payload = {"summary": summary, "source": "db-1", "severity": "warning"}
        body = {"event_action": "trigger", "dedup_key": "db-1/disk", "payload": payload}
        yield "POST", "/alerts", body, bearer


def story(local_api: LocalApi, token: str, colleague: str) -> Iterator[tuple[str, str, Any]]:
    """An incident through every event type: the requests, in order."""
    status, created = local_api.request(
        "POST", "/incidents", token, {"title": "Payload types", "assignees": [colleague]}
    )
    assert status == 201, created
    path = f"/incidents/{created['summary']['id']}"
    yield "PATCH", path, {"severity": "SEV1", "title": "Payload types, all of them"}
    yield "POST", f"{path}/participants", {"participant_id": colleague, "role": "responder"}
    yield "POST", f"{path}/notes", {"text": "Rolled back deploy 4812 \U0001f680"}
    yield "DELETE", f"{path}/participants/{colleague}", None
    yield "POST", f"{path}/resolve", None
    yield "PATCH", path, {"status": "ACKNOWLEDGED"}
    yield from handoff(local_api, token, colleague)


def handoff(local_api: LocalApi, token: str, colleague: str) -> Iterator[tuple[str, str, Any]]:
    """A schedule of the signed-in user handed to `colleague` at once (an override from
    now): one ``schedule.handoff``."""
    me = next(u["user_id"] for u in local_api.accounts[1]["users"] if u["token"] == token)
    layer = {"name": "Primary", "start": "2026-01-05T00:00:00Z", "users": [{"user_id": me}],
             "rotation_virtual_start": "2026-01-05T09:00:00Z",
             "rotation_turn_length_seconds": 86_400}  # fmt: skip
    body = {"name": "Payload types", "time_zone": "UTC", "schedule_layers": [layer]}
    status, schedule = local_api.request("POST", "/schedules", token, body)
    assert status == 201, schedule
    now = datetime.now(UTC)
    cover = {"start": now.isoformat(), "end": (now + timedelta(hours=1)).isoformat(),
             "user_id": colleague}  # fmt: skip
    yield "POST", f"/schedules/{schedule['id']}/overrides", cover
