"""Swagger UI at ``/docs`` as a front-end developer uses it (headless Chromium): signed in as
the first demo user, every operation's Try it out → Execute sends its prefilled request and
shows the API's answer. A prefilled value the API refuses (400) or an Execute that never
sends (an array parameter with a text example used to hang it) fails the test."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator

from tests.browser import chromium, watched
from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration
WAIT_MS = 15_000
WEBHOOK_OPERATIONS = {
    "get_webhook",
    "update_webhook",
    "delete_webhook",
    "rotate_webhook_secret",
    "list_deliveries",
    "replay_webhook",
    "test_webhook",
}
"""The demo has no webhook: their prefilled id is well formed and answers 404."""


def execute(operation: Locator) -> str:
    """Open the operation, Try it out, Execute; the status Swagger UI shows."""
    operation.locator(".opblock-summary").first.click()
    operation.locator("button.try-out__btn").click()
    operation.locator("button.execute").click()
    status = operation.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for(timeout=WAIT_MS)
    return status.inner_text().strip()


def test_every_operation_executes_with_its_prefilled_values(local_api: LocalApi) -> None:
    with chromium() as browser:
        seen = watched(browser)
        page = seen.page
        page.goto(f"{local_api.url}/docs", wait_until="networkidle")
        page.locator(".opblock").first.wait_for()
        page.evaluate(
            "token => ui.preauthorizeApiKey('Authorization', token)", local_api.token(0, 0)
        )
        statuses, urls = {}, {}
        for operation in page.locator(".opblock").all():
            name = (operation.get_attribute("id") or "").rsplit("-", 1)[-1]
            statuses[name] = execute(operation)
            urls[name] = operation.locator(".request-url pre").first.inner_text()
        assert len(statuses) == 29, statuses
        expected_404 = {name for name in statuses if name in WEBHOOK_OPERATIONS}
        for name, status in statuses.items():
            wanted = {"404"} if name in expected_404 else {"200", "201", "202", "204"}
            assert status in wanted, (name, status, statuses)
        assert not seen.external, seen.external
        for prefilled in ("team=team_", "since=2026", "until=2026", "status=", "severity="):
            assert prefilled in urls["my_teams_incidents"], urls["my_teams_incidents"]
