"""Each alert the API accepts counts once in ``AlertsReceived`` (the dashboard's alerts in,
issue 53), with the service dimension alone; one refused counts nothing. The alerts handler
runs whole on a proxy event, the integration's key check and the ingest replaced."""

from __future__ import annotations

import json
from typing import Any

import pytest

from incidents.alerts.models import AlertAccepted, AlertStatus, Integration
from incidents.errors import UnauthorizedError
from incidents.store import Caller
from lambdas import alerts
from lambdas.http import admission
from lambdas.routes import ROUTES
from local.api.proxy_events import LocalLambdaContext, json_body, proxy_event

KEY = "ik_test"
TRIGGER = {
    "event_action": "trigger",
    "dedup_key": "disk-full",
    "payload": {"summary": "Disk full", "source": "db-1", "severity": "critical"},
}


def integration() -> Integration:
    return Integration.model_validate(
        {
            "id": "intg_1", "name": "Grafana", "team_id": None, "default_severity": None,
            "auto_resolve_timeout": None, "acknowledgement_timeout": None,
            "alert_grouping": {"type": "none"}, "key_hint": "test",
            "created_at": "2026-11-25T00:00:00Z", "last_used_at": None,
        }
    )  # fmt: skip


def authenticate(_store: object, key: str) -> tuple[Caller, Integration]:
    """The key check: only `KEY` is an integration's."""
    if key != KEY:
        raise UnauthorizedError("not an integration key")
    return Caller(account_id="acct_1", user_id="intg_1"), integration()


def ingested(_store: object, _who: Caller, _by: Integration, body: Any) -> AlertAccepted:
    return AlertAccepted(status=AlertStatus.OPENED, dedup_key=body.dedup_key, incident_id=None)


@pytest.fixture(autouse=True)
def no_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "store", lambda: None)
    monkeypatch.setattr(admission, "authenticate", authenticate)
    monkeypatch.setattr(admission, "admit", lambda account, takes: {})
    monkeypatch.setattr(alerts, "store", lambda: None)
    monkeypatch.setattr(alerts, "ingest_alert", ingested)


def post_alert(route: str, key: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[Any]]:
    """The status of one alert posted on `route` with `key`, and the EMF documents printed."""
    event = proxy_event(
        ROUTES[route], headers={"Authorization": f"Bearer {key}"}, body=json_body(TRIGGER)
    )
    capsys.readouterr()
    answer = alerts.handler(event, LocalLambdaContext())  # type: ignore[arg-type]
    out = capsys.readouterr().out
    return answer["statusCode"], [json.loads(line) for line in out.splitlines() if '"_aws"' in line]


@pytest.mark.parametrize("route", ["send_alert", "enqueue_event"])
def test_an_accepted_alert_counts_once(route: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, emitted = post_alert(route, KEY, capsys)
    assert status == 202
    (metrics,) = emitted
    assert metrics["AlertsReceived"] == [1.0]
    (directive,) = metrics["_aws"]["CloudWatchMetrics"]
    (dimensions,) = directive["Dimensions"]
    assert set(dimensions) <= {"service"}, "no team, account or integration"


def test_a_refused_alert_counts_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    status, emitted = post_alert("send_alert", "ik_other", capsys)
    assert status == 401
    assert not any("AlertsReceived" in metrics for metrics in emitted)
