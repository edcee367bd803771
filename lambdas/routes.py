"""The route table: the one list of API routes the handlers, the CDK stack and the local
runtime all read, so a route cannot exist in one and be missing in another."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from incidents.account_limits import Limited


class Group(StrEnum):
    """A handler group: one Lambda function, one module in `lambdas` (``teams`` serves
    people too: teams, memberships and profiles; ``alerts`` serves machine access:
    integrations, alerts and API keys; ``schedules`` serves who is on call too)."""

    INCIDENT_COMMANDS = "incident_commands"
    INCIDENT_QUERIES = "incident_queries"
    TEAMS = "teams"
    WEBHOOKS = "webhooks"
    ALERTS = "alerts"
    SCHEDULES = "schedules"

    @property
    def handler(self) -> str:
        """The Lambda handler string of the group's function."""
        return f"lambdas.{self.value}.handler"


LOOKUP = (400, 404)
"""A read of one thing by its id: a malformed id, or none in the caller's account."""
LIST = (400,)
"""A list: a bad filter, limit or cursor."""
WRITE = (400, 404, 409, 413, 415)
"""A change with a JSON body to something named in the path: bad input, not found, a
concurrent change, a body too large or not JSON."""
CREATE = (400, 409, 413, 415)
"""A new thing from a JSON body, with nothing named in the path."""
ACTION = (400, 404, 409)
"""A change without a body to something named in the path."""


ALERT_MAX_BYTES = 512 * 1024
"""An alert's body at most: PagerDuty's Events API v2 limit, so what it takes we take."""


@dataclass(frozen=True)
class Route:
    """One method on one path (API Gateway syntax for path parameters: ``{id}``), with the
    error statuses it can answer besides every route's 401, 429, 431, 500 and 503."""

    method: str
    path: str
    group: Group
    summary: str
    status: int = 200
    errors: tuple[int, ...] = ()
    etag: bool = False
    """It answers with an incident, whose version the ``ETag`` header carries."""
    conditional: bool = False
    """It answers ``If-None-Match`` with a 304 when the incident has not changed."""
    counter_tag: bool = False
    """Its first page's ``ETag`` names the incident's event counter; ``If-None-Match`` with it
    is a 304 while no event was added."""
    page_tag: bool = False
    """Its first page's ``ETag`` is a digest of the page; ``If-None-Match`` with it is a 304
    while the page would list the same items."""
    integration_key: bool = False
    """Called by machines with an integration key (checked by its handler), not by users
    through the Cognito authorizer."""
    feed_token: bool = False
    """Read by calendar apps at a secret URL: the token in its path is the credential
    (checked by its handler), so it is called without the authorizer."""
    page_link: bool = False
    """Opened by a person from a page's message: the token in its path is the credential,
    and its handler answers HTML pages (errors too), admitting the caller itself."""
    max_body: int | None = None
    """Bytes of body it takes at most (a 413 above, before anything is parsed); None: the
    gateway's and Lambda's own limits."""
    bad_request: str | None = None
    """The message of its commonest 400, where its shape does not tell it (a read of days
    takes a range, not a limit); None: derived from its shape."""
    limited: Limited | None = None
    """The account limit its create counts against (a 409 ``limit_reached`` at it)."""

    @property
    def gateway_authorized(self) -> bool:
        """Whether the gateway's authorizer admits its callers (else its handler does)."""
        return not (self.integration_key or self.feed_token or self.page_link)


ROUTES: dict[str, Route] = {
    "create_incident": Route(
        "POST", "/incidents", Group.INCIDENT_COMMANDS, "Create an incident", 201, WRITE, etag=True
    ),
    "get_incident": Route(
        "GET",
        "/incidents/{incident_id}",
        Group.INCIDENT_COMMANDS,
        "Get an incident",
        errors=LOOKUP,
        etag=True,
        conditional=True,
    ),
    "get_incident_by_number": Route(
        "GET",
        "/incidents/by-number/{number}",
        Group.INCIDENT_COMMANDS,
        "Get an incident by its number",
        errors=LOOKUP,
        etag=True,
        conditional=True,
    ),
    "update_incident": Route(
        "PATCH",
        "/incidents/{incident_id}",
        Group.INCIDENT_COMMANDS,
        "Update an incident",
        errors=(*WRITE, 412),
        etag=True,
    ),
    "resolve_incident": Route(
        "POST",
        "/incidents/{incident_id}/resolve",
        Group.INCIDENT_COMMANDS,
        "Resolve an incident",
        errors=ACTION,
        etag=True,
    ),
    "escalate_incident": Route(
        "POST",
        "/incidents/{incident_id}/escalate",
        Group.INCIDENT_COMMANDS,
        "Escalate an incident to a level of its escalation policy",
        errors=WRITE,
        etag=True,
    ),
    "reassign_incident": Route(
        "POST",
        "/incidents/{incident_id}/reassign",
        Group.INCIDENT_COMMANDS,
        "Reassign an incident to an escalation policy",
        errors=WRITE,
        etag=True,
    ),
    "add_participant": Route(
        "POST",
        "/incidents/{incident_id}/participants",
        Group.INCIDENT_COMMANDS,
        "Add a participant (or a role)",
        errors=WRITE,
        etag=True,
    ),
    "remove_participant": Route(
        "DELETE",
        "/incidents/{incident_id}/participants/{participant_id}",
        Group.INCIDENT_COMMANDS,
        "Remove a participant",
        204,
        ACTION,
    ),
    "add_note": Route(
        "POST",
        "/incidents/{incident_id}/notes",
        Group.INCIDENT_COMMANDS,
        "Add a note to the timeline",
        201,
        WRITE,
    ),
    "incident_timeline": Route(
        "GET",
        "/incidents/{incident_id}/timeline",
        Group.INCIDENT_QUERIES,
        "An incident's timeline",
        errors=LOOKUP,
        counter_tag=True,
    ),
    "incident_log_entries": Route(
        "GET",
        "/incidents/{incident_id}/log-entries",
        Group.INCIDENT_QUERIES,
        "An incident's log entries (PagerDuty's)",
        errors=LOOKUP,
    ),
    "account_events": Route(
        "GET", "/events", Group.INCIDENT_QUERIES, "The account's events", errors=LIST, page_tag=True
    ),
    "my_incidents": Route(
        "GET", "/me/incidents", Group.INCIDENT_QUERIES, "My incidents by state", errors=LIST
    ),
    "my_teams_incidents": Route(
        "GET",
        "/me/teams/incidents",
        Group.INCIDENT_QUERIES,
        "My teams' incidents by state",
        errors=(*LIST, 403),
    ),
    "team_incidents": Route(
        "GET",
        "/teams/{team_id}/incidents",
        Group.INCIDENT_QUERIES,
        "A team's incidents",
        errors=(*LOOKUP, 403),
    ),
    "account_incidents": Route(
        "GET", "/incidents", Group.INCIDENT_QUERIES, "The account's incidents by state", errors=LIST
    ),
    "create_webhook": Route("POST", "/webhooks", Group.WEBHOOKS, "Register a webhook", 201, CREATE),
    "list_webhooks": Route(
        "GET", "/webhooks", Group.WEBHOOKS, "The account's webhooks", errors=LIST
    ),
    "get_webhook": Route(
        "GET", "/webhooks/{webhook_id}", Group.WEBHOOKS, "Get a webhook", errors=LOOKUP
    ),
    "update_webhook": Route(
        "PATCH",
        "/webhooks/{webhook_id}",
        Group.WEBHOOKS,
        "Change or re-enable a webhook",
        errors=WRITE,
    ),
    "delete_webhook": Route(
        "DELETE", "/webhooks/{webhook_id}", Group.WEBHOOKS, "Delete a webhook", 204, ACTION
    ),
    "rotate_webhook_secret": Route(
        "POST",
        "/webhooks/{webhook_id}/rotate-secret",
        Group.WEBHOOKS,
        "Rotate a webhook's signing secret",
        errors=ACTION,
    ),
    "list_deliveries": Route(
        "GET",
        "/webhooks/{webhook_id}/deliveries",
        Group.WEBHOOKS,
        "A webhook's delivery attempts",
        errors=LOOKUP,
    ),
    "replay_webhook": Route(
        "POST",
        "/webhooks/{webhook_id}/replay",
        Group.WEBHOOKS,
        "Deliver the account's events again from a moment on",
        202,
        WRITE,
    ),
    "test_webhook": Route(
        "POST", "/webhooks/{webhook_id}/test", Group.WEBHOOKS, "Send a test event", 202, ACTION
    ),
    "create_integration": Route(
        "POST", "/integrations", Group.ALERTS, "Create an integration", 201, (*CREATE, 404)
    ),
    "list_integrations": Route("GET", "/integrations", Group.ALERTS, "The account's integrations"),
    "get_integration": Route(
        "GET", "/integrations/{integration_id}", Group.ALERTS, "Get an integration", errors=LOOKUP
    ),
    "update_integration": Route(
        "PATCH",
        "/integrations/{integration_id}",
        Group.ALERTS,
        "Rename, re-route or re-grade an integration",
        errors=WRITE,
    ),
    "delete_integration": Route(
        "DELETE",
        "/integrations/{integration_id}",
        Group.ALERTS,
        "Delete an integration (its key stops working)",
        204,
        ACTION,
    ),
    "rotate_integration_key": Route(
        "POST",
        "/integrations/{integration_id}/rotate-key",
        Group.ALERTS,
        "Rotate an integration's key",
        errors=ACTION,
    ),
    "incident_alerts": Route(
        "GET",
        "/incidents/{incident_id}/alerts",
        Group.ALERTS,
        "How many alerts an incident received",
        errors=LOOKUP,
    ),
    "send_alert": Route(
        "POST",
        "/alerts",
        Group.ALERTS,
        "Send an alert (an integration key, not a user)",
        202,
        CREATE,
        integration_key=True,
        max_body=ALERT_MAX_BYTES,
    ),
    "enqueue_event": Route(
        "POST",
        "/v2/enqueue",
        Group.ALERTS,
        "Send an alert on PagerDuty's path (give an Events API v2 client the API's URL)",
        202,
        CREATE,
        integration_key=True,
        max_body=ALERT_MAX_BYTES,
    ),
    "enqueue_change": Route(
        "POST",
        "/v2/change/enqueue",
        Group.ALERTS,
        "Send a change event (PagerDuty's Change Events API path): kept in the change log",
        202,
        CREATE,
        integration_key=True,
        max_body=ALERT_MAX_BYTES,
    ),
    "list_changes": Route(
        "GET", "/changes", Group.INCIDENT_QUERIES, "The account's change log", errors=LIST
    ),
    "incident_insights": Route(
        "GET",
        "/insights/incidents",
        Group.INCIDENT_QUERIES,
        "Incidents opened, MTTA and MTTR by period",
        errors=LIST,
        bad_request="until (2027-03-01) is before from (2027-03-02)",
    ),
    "create_heartbeat": Route(
        "POST",
        "/heartbeats",
        Group.ALERTS,
        "Create a heartbeat",
        201,
        (*CREATE, 404),
        limited=Limited.HEARTBEATS,
    ),
    "list_heartbeats": Route(
        "GET", "/heartbeats", Group.ALERTS, "The account's heartbeats", errors=LIST
    ),
    "get_heartbeat": Route(
        "GET", "/heartbeats/{name}", Group.ALERTS, "Get a heartbeat", errors=LOOKUP
    ),
    "update_heartbeat": Route(
        "PATCH",
        "/heartbeats/{name}",
        Group.ALERTS,
        "Change a heartbeat's interval, or enable or disable it",
        errors=WRITE,
    ),
    "delete_heartbeat": Route(
        "DELETE", "/heartbeats/{name}", Group.ALERTS, "Delete a heartbeat", 204, LOOKUP
    ),
    **{
        f"ping_heartbeat_{method.lower()}": Route(
            method,
            "/heartbeats/{name}/ping",
            Group.ALERTS,
            f"Ping a heartbeat ({method}; an integration key, not a user)",
            202,
            (*LOOKUP, 409),
            integration_key=True,
        )
        for method in ("GET", "POST", "PUT", "PATCH")
    },
    "create_maintenance_window": Route(
        "POST",
        "/maintenance-windows",
        Group.ALERTS,
        "Create a maintenance window",
        201,
        (*CREATE, 404),
        limited=Limited.MAINTENANCE_WINDOWS,
    ),
    "list_maintenance_windows": Route(
        "GET",
        "/maintenance-windows",
        Group.ALERTS,
        "The account's maintenance windows",
        errors=LIST,
    ),
    "get_maintenance_window": Route(
        "GET",
        "/maintenance-windows/{window_id}",
        Group.ALERTS,
        "Get a maintenance window",
        errors=LOOKUP,
    ),
    "end_maintenance_window": Route(
        "POST",
        "/maintenance-windows/{window_id}/end",
        Group.ALERTS,
        "End an ongoing maintenance window now",
        errors=ACTION,
    ),
    "delete_maintenance_window": Route(
        "DELETE",
        "/maintenance-windows/{window_id}",
        Group.ALERTS,
        "Delete a maintenance window that has not started",
        204,
        ACTION,
    ),
    "maintenance_window_alerts": Route(
        "GET",
        "/maintenance-windows/{window_id}/alerts",
        Group.ALERTS,
        "The alerts a maintenance window suppressed",
        errors=LOOKUP,
    ),
    "create_api_key": Route(
        "POST", "/api-keys", Group.ALERTS, "Create an API key (people only)", 201, CREATE
    ),
    "list_api_keys": Route("GET", "/api-keys", Group.ALERTS, "The account's API keys"),
    "get_api_key": Route(
        "GET", "/api-keys/{key_id}", Group.ALERTS, "Get an API key", errors=LOOKUP
    ),
    "revoke_api_key": Route(
        "DELETE", "/api-keys/{key_id}", Group.ALERTS, "Revoke an API key", 204, LOOKUP
    ),
    "create_team": Route("POST", "/teams", Group.TEAMS, "Create a team", 201, CREATE),
    "my_teams": Route("GET", "/me/teams", Group.TEAMS, "My teams"),
    "save_profile": Route("PUT", "/me", Group.TEAMS, "Save my profile", errors=CREATE),
    "get_profile": Route("GET", "/users/{user_id}", Group.TEAMS, "A user's profile", errors=LOOKUP),
    "list_users": Route("GET", "/users", Group.TEAMS, "The account's users", errors=LIST),
    "update_user": Route(
        "PATCH", "/users/{user_id}", Group.TEAMS, "Change a user's profile", errors=(*WRITE, 403)
    ),
    "list_contact_methods": Route(
        "GET",
        "/users/{user_id}/contact-methods",
        Group.TEAMS,
        "A user's contact methods",
        errors=(*LOOKUP, 403),
    ),
    "create_contact_method": Route(
        "POST",
        "/users/{user_id}/contact-methods",
        Group.TEAMS,
        "Add a contact method (unverified: a code is made for it)",
        201,
        (*WRITE, 403),
    ),
    "get_contact_method": Route(
        "GET",
        "/users/{user_id}/contact-methods/{contact_method_id}",
        Group.TEAMS,
        "Get a contact method",
        errors=(*LOOKUP, 403),
    ),
    "replace_contact_method": Route(
        "PUT",
        "/users/{user_id}/contact-methods/{contact_method_id}",
        Group.TEAMS,
        "Replace a contact method (a new address is verified again)",
        errors=(*WRITE, 403),
    ),
    "delete_contact_method": Route(
        "DELETE",
        "/users/{user_id}/contact-methods/{contact_method_id}",
        Group.TEAMS,
        "Delete a contact method and the notification rules that use it",
        204,
        (*ACTION, 403),
    ),
    "verify_contact_method": Route(
        "POST",
        "/users/{user_id}/contact-methods/{contact_method_id}/verify",
        Group.TEAMS,
        "Verify a contact method with its code",
        errors=(*WRITE, 403),
    ),
    "send_contact_method_verification": Route(
        "POST",
        "/users/{user_id}/contact-methods/{contact_method_id}/send-verification",
        Group.TEAMS,
        "Make a new verification code for a contact method",
        202,
        (*ACTION, 403),
    ),
    "list_notification_rules": Route(
        "GET",
        "/users/{user_id}/notification-rules",
        Group.TEAMS,
        "A user's notification rules",
        errors=(*LOOKUP, 403),
    ),
    "create_notification_rule": Route(
        "POST",
        "/users/{user_id}/notification-rules",
        Group.TEAMS,
        "Add a notification rule",
        201,
        (*WRITE, 403),
    ),
    "get_notification_rule": Route(
        "GET",
        "/users/{user_id}/notification-rules/{notification_rule_id}",
        Group.TEAMS,
        "Get a notification rule",
        errors=(*LOOKUP, 403),
    ),
    "replace_notification_rule": Route(
        "PUT",
        "/users/{user_id}/notification-rules/{notification_rule_id}",
        Group.TEAMS,
        "Replace a notification rule",
        errors=(*WRITE, 403),
    ),
    "delete_notification_rule": Route(
        "DELETE",
        "/users/{user_id}/notification-rules/{notification_rule_id}",
        Group.TEAMS,
        "Delete a notification rule",
        204,
        (*ACTION, 403),
    ),
    "create_escalation_policy": Route(
        "POST",
        "/escalation-policies",
        Group.SCHEDULES,
        "Create an escalation policy",
        201,
        (*CREATE, 404),
        limited=Limited.ESCALATION_POLICIES,
    ),
    "list_escalation_policies": Route(
        "GET",
        "/escalation-policies",
        Group.SCHEDULES,
        "The account's escalation policies",
        errors=LIST,
    ),
    "get_escalation_policy": Route(
        "GET",
        "/escalation-policies/{policy_id}",
        Group.SCHEDULES,
        "Get an escalation policy",
        errors=LOOKUP,
    ),
    "replace_escalation_policy": Route(
        "PUT",
        "/escalation-policies/{policy_id}",
        Group.SCHEDULES,
        "Replace an escalation policy (incidents escalating keep the version they started with)",
        errors=WRITE,
    ),
    "delete_escalation_policy": Route(
        "DELETE",
        "/escalation-policies/{policy_id}",
        Group.SCHEDULES,
        "Delete an escalation policy no integration names",
        204,
        ACTION,
    ),
    "create_schedule": Route(
        "POST",
        "/schedules",
        Group.SCHEDULES,
        "Create a schedule",
        201,
        (*CREATE, 404),
        limited=Limited.SCHEDULES,
    ),
    "list_schedules": Route(
        "GET", "/schedules", Group.SCHEDULES, "The account's schedules", errors=LIST
    ),
    "preview_schedule": Route(
        "POST",
        "/schedules/preview",
        Group.SCHEDULES,
        "Render a schedule without saving it",
        errors=(400, 413, 415),
    ),
    "get_schedule": Route(
        "GET",
        "/schedules/{schedule_id}",
        Group.SCHEDULES,
        "Get a schedule, rendered over a range",
        errors=LOOKUP,
    ),
    "update_schedule": Route(
        "PUT",
        "/schedules/{schedule_id}",
        Group.SCHEDULES,
        "Change a schedule from a time on",
        errors=WRITE,
    ),
    "delete_schedule": Route(
        "DELETE", "/schedules/{schedule_id}", Group.SCHEDULES, "Delete a schedule", 204, ACTION
    ),
    "create_override": Route(
        "POST",
        "/schedules/{schedule_id}/overrides",
        Group.SCHEDULES,
        "Create an override",
        201,
        WRITE,
    ),
    "list_overrides": Route(
        "GET",
        "/schedules/{schedule_id}/overrides",
        Group.SCHEDULES,
        "A schedule's overrides over a range",
        errors=LOOKUP,
    ),
    "delete_override": Route(
        "DELETE",
        "/schedules/{schedule_id}/overrides/{override_id}",
        Group.SCHEDULES,
        "Delete an override not yet ended",
        204,
        ACTION,
    ),
    "list_oncalls": Route(
        "GET",
        "/oncalls",
        Group.SCHEDULES,
        "Who is on call",
        errors=LIST,
        bad_request="since must not be after until, at most 90 days apart",
    ),
    "user_oncalls": Route(
        "GET",
        "/users/{user_id}/oncalls",
        Group.SCHEDULES,
        "Where a user is on call",
        errors=LOOKUP,
    ),
    "rotate_schedule_feed": Route(
        "POST",
        "/schedules/{schedule_id}/rotate-feed-url",
        Group.SCHEDULES,
        "A new calendar feed URL for a schedule",
        errors=ACTION,
    ),
    "schedule_feed": Route(
        "GET",
        "/schedules/{schedule_id}/ical/{token}",
        Group.SCHEDULES,
        "A schedule's calendar feed",
        errors=(404,),  # the token is checked first: a malformed id is no feed either
        feed_token=True,
    ),
    "rotate_user_feed": Route(
        "POST",
        "/users/{user_id}/rotate-feed-url",
        Group.SCHEDULES,
        "A new calendar feed URL for a user's shifts",
        errors=(*ACTION, 403),
    ),
    "user_feed": Route(
        "GET",
        "/users/{user_id}/ical/{token}",
        Group.SCHEDULES,
        "A user's shifts as a calendar feed",
        errors=(404,),  # the token is checked first: a malformed id is no feed either
        feed_token=True,
    ),
    "page_link": Route(
        "GET",
        "/page-links/{token}",
        Group.INCIDENT_COMMANDS,
        "A page's link: the incident, and what the link can do to it",
        errors=(400, 404, 410),  # a malformed token is none either; 400: a query it lacks
        page_link=True,
    ),
    "use_page_link": Route(
        "POST",
        "/page-links/{token}",
        Group.INCIDENT_COMMANDS,
        "Acknowledge or resolve the incident through a page's link (once)",
        errors=(400, 404, 409, 410, 415),
        page_link=True,
    ),
    "add_member": Route(
        "POST", "/teams/{team_id}/members", Group.TEAMS, "Add a member", 201, (*WRITE, 403)
    ),
    "remove_member": Route(
        "DELETE",
        "/teams/{team_id}/members/{user_id}",
        Group.TEAMS,
        "Remove a member",
        204,
        (*ACTION, 403),
    ),
}


def routes_of(group: Group) -> dict[str, Route]:
    """The routes one handler group serves."""
    return {name: route for name, route in ROUTES.items() if route.group is group}


def resolver_rule(route: Route) -> str:
    """The path in Powertools' syntax (``<id>`` instead of ``{id}``)."""
    return route.path.replace("{", "<").replace("}", ">")


SUBJECTS = {
    "incidents": "incidents",
    "events": "incidents",
    "changes": "incidents",
    "insights": "incidents",
    "teams": "teams",
    "users": "teams",
}
"""The first segment of a path, and the scope subject (``:read`` or ``:write``) it needs."""
READ_OR_MANAGE = {
    "schedules": "schedules",
    "oncalls": "schedules",
    "rotate-feed-url": "schedules",
    "escalation-policies": "escalation_policies",
}
"""Path segments whose scope is ``:read`` for reads and ``:manage`` for changes (anywhere in
the path: one user's on-call shifts are a schedules read, a URL to their calendar feed a
schedules change)."""
MANAGED = {
    "webhooks": "webhooks",
    "integrations": "integrations",
    "heartbeats": "integrations",
    "maintenance-windows": "integrations",
    "contact-methods": "users",
    "notification-rules": "users",
}
"""Path segments whose scope is a ``:manage`` one, reads and changes alike, anywhere in the
path (heartbeats are pinged with an integration's key, so managing them is managing
integrations; a maintenance window silences integrations' alerts, so it is too; a user's
contact methods and rules are their phone numbers and addresses, read by few)."""


ALSO_NEEDS = {
    "create_integration": "incidents:write",
    "update_integration": "incidents:write",
    "rotate_integration_key": "incidents:write",
    "create_heartbeat": "incidents:write",
    "update_heartbeat": "incidents:write",
    "create_maintenance_window": "incidents:write",
    "end_maintenance_window": "incidents:write",
    "maintenance_window_alerts": "incidents:read",
    "create_webhook": "incidents:read",
    "update_webhook": "incidents:read",
    "replay_webhook": "incidents:read",
}
"""Routes whose reach goes past their subject, and the scope an API key needs for that as
well: what a key can cause or read through a route is what its scopes grant directly. An
integration's key, a heartbeat's expiry, an integration's timeouts and a window's end
(``resolve_on_end``) open or move incidents, and a window silences the alerts that would;
a window's suppressed alerts are incidents' text, and a webhook (made, pointed elsewhere or
replayed) receives the incidents' events."""


def scopes_of(name: str) -> tuple[str, ...]:
    """Every scope an API key needs to call route `name` (none: not for API keys)."""
    needed = scope_of(ROUTES[name])
    if needed is None:
        return ()
    return (needed, *([ALSO_NEEDS[name]] if name in ALSO_NEEDS else []))


def scope_of(route: Route) -> str | None:
    """The scope an API key needs to call `route`; None: not for API keys (``/me``,
    ``/api-keys``: people only; ``/alerts`` and pings: integration keys). A list of incidents under
    another subject (``/teams/{id}/incidents``) is an incidents read."""
    parts = route.path.split("/")[1:]
    if not route.gateway_authorized:
        return None
    subject = next((READ_OR_MANAGE[p] for p in parts if p in READ_OR_MANAGE), None)
    if subject is not None:
        return f"{subject}:{'read' if route.method == 'GET' else 'manage'}"
    managed = next((MANAGED[p] for p in parts if p in MANAGED), None)
    if managed is not None:
        return f"{managed}:manage"
    if parts[0] not in SUBJECTS:
        return None
    subject = "incidents" if "incidents" in parts else SUBJECTS[parts[0]]
    return f"{subject}:{'read' if route.method == 'GET' else 'write'}"


ROUTE_OF: dict[tuple[str, str], Route] = {(r.method, r.path): r for r in ROUTES.values()}
NAME_OF: dict[Route, str] = {route: name for name, route in ROUTES.items()}
"""The route API Gateway matched, by its ``httpMethod`` and ``resource``."""
