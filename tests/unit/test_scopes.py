"""What each API key scope opens: every route's scope, pinned (a scope that silently moved
would open or close routes for keys already handed out), and the scopes a route's reach
adds (an integration's key opens incidents; a replay sends the account's history)."""

from __future__ import annotations

import pytest

from incidents.access.models import SCOPES
from incidents.errors import ForbiddenError
from lambdas.http.admission import check_scope
from lambdas.routes import ALSO_NEEDS, ROUTES, scope_of, scopes_of

EXPECTED = {
    "incidents:read": {
        "get_incident", "get_incident_by_number", "incident_timeline", "incident_log_entries",
        "account_events", "team_incidents", "account_incidents", "incident_alerts", "list_changes",
        "incident_insights",
    },
    "incidents:write": {
        "create_incident", "update_incident", "resolve_incident", "add_participant",
        "remove_participant", "add_note", "escalate_incident", "reassign_incident",
    },
    "teams:read": {"get_profile", "list_users"},
    "teams:write": {"create_team", "add_member", "remove_member", "update_user"},
    "schedules:read": {
        "list_schedules", "get_schedule", "list_overrides", "list_oncalls", "user_oncalls",
    },
    "schedules:manage": {
        "create_schedule", "preview_schedule", "update_schedule", "delete_schedule",
        "create_override", "delete_override", "rotate_schedule_feed", "rotate_user_feed",
    },
    "escalation_policies:read": {"list_escalation_policies", "get_escalation_policy"},
    "escalation_policies:manage": {
        "create_escalation_policy", "replace_escalation_policy", "delete_escalation_policy",
    },
    "users:manage": {
        "list_contact_methods", "create_contact_method", "get_contact_method",
        "replace_contact_method", "delete_contact_method", "verify_contact_method",
        "send_contact_method_verification", "list_notification_rules",
        "create_notification_rule", "get_notification_rule", "replace_notification_rule",
        "delete_notification_rule",
    },
    "webhooks:manage": {
        "create_webhook", "list_webhooks", "get_webhook", "update_webhook", "delete_webhook",
        "rotate_webhook_secret", "list_deliveries", "replay_webhook", "test_webhook",
    },
    "integrations:manage": {
        "create_integration", "list_integrations", "get_integration", "update_integration",
        "delete_integration", "rotate_integration_key",
        "create_heartbeat", "list_heartbeats", "get_heartbeat", "update_heartbeat",
        "delete_heartbeat",
        "create_maintenance_window", "list_maintenance_windows", "get_maintenance_window",
        "end_maintenance_window", "delete_maintenance_window", "maintenance_window_alerts",
    },
    None: {
        "my_incidents", "my_teams_incidents", "my_teams", "save_profile", "send_alert",
        "enqueue_event", "enqueue_change", "ping_heartbeat_get", "ping_heartbeat_post",
        "ping_heartbeat_put", "ping_heartbeat_patch",
        "create_api_key", "list_api_keys", "get_api_key", "revoke_api_key",
        "schedule_feed", "user_feed", "page_link", "use_page_link",
    },
}  # fmt: skip


def test_every_route_has_the_scope_the_docs_give_it() -> None:
    got: dict[str | None, set[str]] = {}
    for name, route in ROUTES.items():
        got.setdefault(scope_of(route), set()).add(name)
    assert got == EXPECTED


def test_the_scopes_a_key_may_hold_are_exactly_those_routes_need() -> None:
    needed = {scope_of(route) for route in ROUTES.values()} - {None}
    assert needed == set(SCOPES)


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_every_scope_grants_and_refuses_every_route_as_documented(name: str) -> None:
    """The whole matrix: each scope alone, and the route's own scopes together, against
    each route (the HTTP tests show a grant reaching the handler)."""
    route, needed = ROUTES[name], set(scopes_of(name))
    for scope in sorted(SCOPES):
        if needed == {scope}:
            check_scope(route, [scope])
        else:
            with pytest.raises(ForbiddenError):
                check_scope(route, [scope])
    if needed:
        check_scope(route, sorted(needed))
    assert needed - {scope_of(route)} == ({ALSO_NEEDS[name]} if name in ALSO_NEEDS else set())
