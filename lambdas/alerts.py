"""Machine access over HTTP: the account's API keys (people manage them), its integrations,
heartbeats and maintenance windows, and ``POST /alerts``, which monitoring tools call with
an integration key instead of a user's token (``Authorization: Bearer <key>``, or
``routing_key`` in the body as PagerDuty's Events API v2 takes it), with PagerDuty's body
or Alertmanager's and Grafana's webhook bodies."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.metrics import MetricUnit

from incidents.access import api_keys
from incidents.access.models import API_KEY_ID, ApiKey, ApiKeyList, ApiKeyWithKey, NewApiKey
from incidents.alerts import integrations as commands
from incidents.alerts.changes import record_change
from incidents.alerts.grouped import AlertBody, GroupAccepted, GroupedAlerts, ingest_grouped
from incidents.alerts.ingest import alert_count, ingest_alert
from incidents.alerts.models import (
    INTEGRATION_ID,
    AlertAccepted,
    AlertCount,
    ChangeEvent,
    ChangeRecorded,
    Integration,
    IntegrationChanges,
    IntegrationList,
    IntegrationWithKey,
    NewIntegration,
)
from incidents.errors import UnauthorizedError
from incidents.heartbeats import commands as heartbeats
from incidents.heartbeats.models import (
    HEARTBEAT_NAME,
    Heartbeat,
    HeartbeatChanges,
    HeartbeatList,
    NewHeartbeat,
    Pong,
)
from incidents.incident.commands import load_summary
from incidents.maintenance import commands as maintenance
from incidents.maintenance.models import (
    WINDOW_ID,
    MaintenanceWindow,
    MaintenanceWindowList,
    NewMaintenanceWindow,
    SuppressedAlertList,
)
from incidents.models import INCIDENT_ID
from incidents.paging import DEFAULT_LIMIT
from incidents.store import Caller
from lambdas.http.admission import admitted, caller
from lambdas.http.api import (
    answer,
    lambda_handler,
    new_resolver,
    no_content,
    route,
)
from lambdas.http.params import Cursor, Limit
from lambdas.runtime import metrics, store

IntegrationId = Annotated[str, Path(pattern=INTEGRATION_ID)]
ApiKeyId = Annotated[str, Path(pattern=API_KEY_ID)]
IncidentId = Annotated[str, Path(pattern=INCIDENT_ID)]
HeartbeatName = Annotated[str, Path(pattern=HEARTBEAT_NAME)]
WindowId = Annotated[str, Path(pattern=WINDOW_ID)]
SentAlerts = Annotated[AlertBody, Body()]

app = new_resolver()


@route(app, "create_integration")
def create_integration(body: NewIntegration) -> Response[IntegrationWithKey]:
    """A new integration; the answer holds its key (shown only here and on rotation)."""
    created = commands.create_integration(store(), caller(), body)
    return answer(app, created, status=201, location=f"/integrations/{created.id}")


@route(app, "list_integrations")
def list_integrations() -> IntegrationList:
    """The account's integrations, oldest first."""
    return IntegrationList(items=commands.list_integrations(store(), caller()))


@route(app, "get_integration")
def get_integration(integration_id: IntegrationId) -> Integration:
    """One integration (never its key)."""
    return commands.get_integration(store(), caller(), integration_id)


@route(app, "update_integration")
def update_integration(integration_id: IntegrationId, body: IntegrationChanges) -> Integration:
    """Change its name, its team or its default severity."""
    return commands.update_integration(store(), caller(), integration_id, body)


@route(app, "delete_integration")
def delete_integration(integration_id: IntegrationId) -> Response[None]:
    """Delete it; its key stops working at once."""
    commands.delete_integration(store(), caller(), integration_id)
    return no_content()


@route(app, "rotate_integration_key")
def rotate_integration_key(integration_id: IntegrationId) -> IntegrationWithKey:
    """A new key; the old one stops working at once."""
    return commands.rotate_key(store(), caller(), integration_id)


@route(app, "create_heartbeat")
def create_heartbeat(body: NewHeartbeat) -> Response[Heartbeat]:
    """A new heartbeat, watched from now: it expires one interval on unless pinged."""
    created = heartbeats.create_heartbeat(store(), caller(), body)
    return answer(app, created, status=201, location=f"/heartbeats/{created.name}")


@route(app, "list_heartbeats")
def list_heartbeats(limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> HeartbeatList:
    """The account's heartbeats, by name."""
    return heartbeats.list_heartbeats(store(), caller(), limit=limit, cursor=cursor)


@route(app, "get_heartbeat")
def get_heartbeat(name: HeartbeatName) -> Heartbeat:
    """One heartbeat: its status, its last ping and when it expires."""
    return heartbeats.get_heartbeat(store(), caller(), name)


@route(app, "update_heartbeat")
def update_heartbeat(name: HeartbeatName, body: HeartbeatChanges) -> Heartbeat:
    """Change its interval, or enable or disable it (its expiry moves with it)."""
    return heartbeats.update_heartbeat(store(), caller(), name, body)


@route(app, "delete_heartbeat")
def delete_heartbeat(name: HeartbeatName) -> Response[None]:
    """Delete it and its expiry."""
    heartbeats.delete_heartbeat(store(), caller(), name)
    return no_content()


def ping(name: HeartbeatName) -> Response[Pong]:
    """Ping it with its integration's key: it expires one interval from now, and an expired
    heartbeat's incident is resolved. Any of GET, POST, PUT and PATCH (Opsgenie's)."""
    who, integration = _sender()
    return answer(app, heartbeats.ping_heartbeat(store(), who, integration.id, name), status=202)


for _method in ("get", "post", "put", "patch"):
    route(app, f"ping_heartbeat_{_method}")(ping)


@route(app, "create_maintenance_window")
def create_maintenance_window(body: NewMaintenanceWindow) -> Response[MaintenanceWindow]:
    """A new maintenance window on a team or an integration: from its start to its end,
    their alerts open and move nothing and are kept as suppressed."""
    created = maintenance.create_window(store(), caller(), body)
    return answer(app, created, status=201, location=f"/maintenance-windows/{created.id}")


@route(app, "list_maintenance_windows")
def list_maintenance_windows(
    limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> MaintenanceWindowList:
    """The account's maintenance windows, newest first."""
    return maintenance.list_windows(store(), caller(), limit=limit, cursor=cursor)


@route(app, "get_maintenance_window")
def get_maintenance_window(window_id: WindowId) -> MaintenanceWindow:
    """One maintenance window: its status and how many alerts it suppressed."""
    return maintenance.get_window(store(), caller(), window_id)


@route(app, "end_maintenance_window")
def end_maintenance_window(window_id: WindowId) -> MaintenanceWindow:
    """End an ongoing window now (409 for one not started: delete it instead)."""
    return maintenance.end_window(store(), caller(), window_id)


@route(app, "delete_maintenance_window")
def delete_maintenance_window(window_id: WindowId) -> Response[None]:
    """Delete a window that has not started (409 for one that has: end it instead)."""
    maintenance.delete_window(store(), caller(), window_id)
    return no_content()


@route(app, "maintenance_window_alerts")
def maintenance_window_alerts(
    window_id: WindowId, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> SuppressedAlertList:
    """What the window kept of each alert key it suppressed, by integration and dedup key."""
    return maintenance.list_suppressed(store(), caller(), window_id, limit=limit, cursor=cursor)


@route(app, "create_api_key")
def create_api_key(body: NewApiKey) -> Response[ApiKeyWithKey]:
    """A new API key; the answer holds the key (shown only here)."""
    created = api_keys.create_api_key(store(), caller(), body)
    return answer(app, created, status=201, location=f"/api-keys/{created.id}")


@route(app, "list_api_keys")
def list_api_keys() -> ApiKeyList:
    """The account's API keys, oldest first."""
    return ApiKeyList(items=api_keys.list_api_keys(store(), caller()))


@route(app, "get_api_key")
def get_api_key(key_id: ApiKeyId) -> ApiKey:
    """One API key (never the key itself)."""
    return api_keys.get_api_key(store(), caller(), key_id)


@route(app, "revoke_api_key")
def revoke_api_key(key_id: ApiKeyId) -> Response[None]:
    """Revoke it: it stops working within the authorizer cache's minute."""
    api_keys.revoke_api_key(store(), caller(), key_id)
    return no_content()


@route(app, "incident_alerts")
def incident_alerts(incident_id: IncidentId) -> AlertCount:
    """How many alerts the incident received: its counter's shards, one batch read."""
    who = caller()
    load_summary(store(), who, incident_id)  # 404 outside the caller's account
    return AlertCount(
        incident_id=incident_id, alerts=alert_count(store(), who.account_id, incident_id)
    )


@route(app, "send_alert")
def send_alert(body: SentAlerts) -> Response[AlertAccepted | GroupAccepted]:
    """Open, join, acknowledge or resolve the incident of the alert's ``dedup_key`` (of
    each alert's ``fingerprint``, for Alertmanager's and Grafana's webhook bodies)."""
    return _alert(body)


@route(app, "enqueue_event")
def enqueue_event(body: SentAlerts) -> Response[AlertAccepted | GroupAccepted]:
    """``POST /alerts`` on the path PagerDuty's Events API v2 clients post to, so an SDK
    given the API's URL as its base sends here unchanged."""
    return _alert(body)


def _alert(body: AlertBody) -> Response[AlertAccepted | GroupAccepted]:
    """Ingest one alert, or each of a group's; each accepted one counts in
    ``AlertsReceived`` (the dashboard's alerts in; the service dimension alone)."""
    who, integration = _sender()
    accepted: AlertAccepted | GroupAccepted
    if isinstance(body, GroupedAlerts):
        accepted = ingest_grouped(store(), who, integration, body)
        received = len(accepted.alerts)
    else:
        accepted, received = ingest_alert(store(), who, integration, body), 1
    metrics.add_metric(name="AlertsReceived", unit=MetricUnit.Count, value=received)
    return answer(app, accepted, status=202)


@route(app, "enqueue_change")
def enqueue_change(body: ChangeEvent) -> Response[ChangeRecorded]:
    """Keep a change event (a deploy, a configuration push) in the account's change log:
    PagerDuty's Change Events API path, for its clients; it never opens or moves an
    incident (decision 013)."""
    who, integration = _sender()
    return answer(app, record_change(store(), who, integration, body), status=202)


def _sender() -> tuple[Caller, Integration]:
    """The integration that sends, as the request was admitted (its key as
    ``Authorization`` or ``routing_key``; `lambdas.http.admission`)."""
    admission = admitted()
    if admission is None or admission.integration is None:
        raise UnauthorizedError("send the integration key as Authorization: Bearer <key>")
    return admission.caller, admission.integration


handler = lambda_handler(app)
