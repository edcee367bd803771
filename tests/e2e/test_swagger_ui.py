"""Swagger UI at ``/docs`` as a front-end developer uses it (headless Chromium): signed in as
the first demo user, every operation's Try it out → Execute sends its prefilled request and
shows the API's answer, 2xx for every one (the webhook ones prefilled with the demo webhook
``make dev`` registers, the integration ones with its demo integration, the alert with that
integration's key, the API key ones with its demo API key; they were 404s before). A
prefilled value the API refuses (400) or an Execute that never sends (an array parameter
with a text example used to hang it) fails the test. The ``webhooks`` section's entries
(what a receiver gets) have nothing to execute."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page

from incidents.models import EventType
from lambdas.routes import ROUTES
from tests.e2e.conftest import LocalApi
from tests.helpers.browser import chromium, watched

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.slow]
WAIT_MS = 120_000
"""An upper bound on waiting for an answer or a click, never reached when the page works:
under load a render (a large answer's highlighting) can hold the page's one thread for
longer than Playwright's default 30 s, and each wait ends as soon as the page is ready."""
LAST = (
    "rotate_schedule_feed",
    "rotate_user_feed",
    "end_maintenance_window",
    "delete_maintenance_window",
    "delete_heartbeat",
    "rotate_integration_key",
    "delete_integration",
    "revoke_api_key",
    "delete_webhook",
)
"""Executed after the others, in this order: they rotate the demo feeds' URLs (which the
feeds' reads are prefilled with), end the demo's ongoing maintenance window
(which the window's reads name) and delete its scheduled one, delete the demo heartbeat
(which the pings name), rotate the demo integration's key (which the alert is prefilled
with) and delete it, the demo API key and the demo webhook (as a user clicking them would;
``make dev`` makes them again on its next start)."""

ONCE = {("use_page_link", "410")}
"""A page's link acts once: a request before this walk (the fuzzing's, on the same server)
may have used the demo's, and then it says so."""

OPERATIONS_BY_TAG = """() => [...document.querySelectorAll('.opblock')].map(operation => [
    operation.id,
    operation.closest('.opblock-tag-section')?.querySelector('.opblock-tag')?.dataset.tag])"""
"""Each entry's element id (``operations-<tag>-<operationId>``) and its tag (none for the
``webhooks`` section's), in page order."""


def execute(operation: Locator) -> tuple[str, str]:
    """Open the operation, Try it out, Execute; the status Swagger UI shows and the request
    URL. The operation is closed again: every open one is re-rendered on each change."""
    summary = operation.locator(".opblock-summary").first
    summary.click()
    operation.locator("button.try-out__btn").click()
    operation.locator("button.execute").click()
    status = operation.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for(timeout=WAIT_MS)
    answer = status.inner_text().strip(), operation.locator(".request-url pre").first.inner_text()
    summary.click()
    operation.locator(".opblock-body").wait_for(state="detached")
    return answer


def shown(page: Page, tag: str) -> None:
    """Filter the page to one tag, as a reader with a long API does: Swagger UI re-renders
    every shown operation on each click, so with all of them shown each click waited on a
    render of the whole API."""
    box = page.locator("input.operation-filter-input")
    if box.input_value() != tag:
        box.fill(tag)
        page.locator(f'.opblock-tag[data-tag="{tag}"]').wait_for()


def test_every_operation_executes_with_its_prefilled_values(local_api: LocalApi) -> None:
    with chromium() as browser:
        seen = watched(browser)
        page = seen.page
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{local_api.url}/docs", wait_until="networkidle")
        page.locator(".opblock").first.wait_for()
        page.evaluate(
            "token => ui.preauthorizeApiKey('Authorization', token)", local_api.token(0, 0)
        )
        page.evaluate(  # the pings' scheme: the demo integration's key
            "key => ui.preauthorizeApiKey('IntegrationKey', key)",
            local_api.variables["INTEGRATION_KEY"],
        )
        entries: list[tuple[str, str | None]] = page.evaluate(OPERATIONS_BY_TAG)
        deliveries = [entry_id for entry_id, tag in entries if tag is None]
        assert len(deliveries) == len(EventType) + 1, "a webhooks entry per event type and test"
        tags = {entry_id.rsplit("-", 1)[-1]: (entry_id, tag) for entry_id, tag in entries if tag}
        last = {name: n for n, name in enumerate(LAST, start=1)}
        statuses, urls = {}, {}
        for name in sorted(tags, key=lambda name: last.get(name, 0)):  # stable: page order
            entry_id, tag = tags[name]
            shown(page, tag)
            statuses[name], urls[name] = execute(page.locator(f'[id="{entry_id}"]'))
        assert len(statuses) == len(ROUTES), statuses
        failed = {n: s for n, s in statuses.items()
                  if s not in {"200", "201", "202", "204"} and (n, s) not in ONCE}  # fmt: skip
        assert not failed, (failed, statuses)
        assert not seen.external, seen.external
        for prefilled in ("team=team_", "since=2026", "until=2026", "status=", "severity="):
            assert prefilled in urls["my_teams_incidents"], urls["my_teams_incidents"]
