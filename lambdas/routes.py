"""The route table: the one list of API routes the handlers, the CDK stack and the local
runtime all read, so a route cannot exist in one and be missing in another."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Group(StrEnum):
    """A handler group: one Lambda function, one module in `lambdas` (``teams`` serves
    people too: teams, memberships and profiles)."""

    INCIDENT_COMMANDS = "incident_commands"
    INCIDENT_QUERIES = "incident_queries"
    TEAMS = "teams"
    WEBHOOKS = "webhooks"

    @property
    def handler(self) -> str:
        """The Lambda handler string of the group's function."""
        return f"lambdas.{self.value}.handler"


REQUEST_HEADERS = ["Authorization", "Content-Type", "Idempotency-Key", "If-Match"]
"""Headers a browser page sends to the API (what CORS must allow)."""


@dataclass(frozen=True)
class Route:
    """One method on one path (API Gateway syntax for path parameters: ``{id}``)."""

    method: str
    path: str
    group: Group
    summary: str
    status: int = 200


ROUTES: dict[str, Route] = {
    "create_incident": Route(
        "POST", "/incidents", Group.INCIDENT_COMMANDS, "Create an incident", 201
    ),
    "get_incident": Route(
        "GET", "/incidents/{incident_id}", Group.INCIDENT_COMMANDS, "Get an incident"
    ),
    "get_incident_by_number": Route(
        "GET",
        "/incidents/by-number/{number}",
        Group.INCIDENT_COMMANDS,
        "Get an incident by its number",
    ),
    "update_incident": Route(
        "PATCH", "/incidents/{incident_id}", Group.INCIDENT_COMMANDS, "Update an incident"
    ),
    "resolve_incident": Route(
        "POST",
        "/incidents/{incident_id}/resolve",
        Group.INCIDENT_COMMANDS,
        "Resolve an incident",
    ),
    "add_participant": Route(
        "POST",
        "/incidents/{incident_id}/participants",
        Group.INCIDENT_COMMANDS,
        "Add a participant (or a role)",
    ),
    "remove_participant": Route(
        "DELETE",
        "/incidents/{incident_id}/participants/{participant_id}",
        Group.INCIDENT_COMMANDS,
        "Remove a participant",
        204,
    ),
    "add_note": Route(
        "POST",
        "/incidents/{incident_id}/notes",
        Group.INCIDENT_COMMANDS,
        "Add a note to the timeline",
        201,
    ),
    "incident_timeline": Route(
        "GET",
        "/incidents/{incident_id}/timeline",
        Group.INCIDENT_QUERIES,
        "An incident's timeline",
    ),
    "account_events": Route("GET", "/events", Group.INCIDENT_QUERIES, "The account's events"),
    "my_incidents": Route("GET", "/me/incidents", Group.INCIDENT_QUERIES, "My incidents by state"),
    "my_teams_incidents": Route(
        "GET", "/me/teams/incidents", Group.INCIDENT_QUERIES, "My teams' incidents by state"
    ),
    "team_incidents": Route(
        "GET", "/teams/{team_id}/incidents", Group.INCIDENT_QUERIES, "A team's incidents"
    ),
    "account_incidents": Route(
        "GET", "/incidents", Group.INCIDENT_QUERIES, "The account's incidents by state"
    ),
    "create_webhook": Route("POST", "/webhooks", Group.WEBHOOKS, "Register a webhook", 201),
    "list_webhooks": Route("GET", "/webhooks", Group.WEBHOOKS, "The account's webhooks"),
    "get_webhook": Route("GET", "/webhooks/{webhook_id}", Group.WEBHOOKS, "Get a webhook"),
    "update_webhook": Route(
        "PATCH", "/webhooks/{webhook_id}", Group.WEBHOOKS, "Change or re-enable a webhook"
    ),
    "delete_webhook": Route(
        "DELETE", "/webhooks/{webhook_id}", Group.WEBHOOKS, "Delete a webhook", 204
    ),
    "rotate_webhook_secret": Route(
        "POST",
        "/webhooks/{webhook_id}/rotate-secret",
        Group.WEBHOOKS,
        "Rotate a webhook's signing secret",
    ),
    "list_deliveries": Route(
        "GET",
        "/webhooks/{webhook_id}/deliveries",
        Group.WEBHOOKS,
        "A webhook's delivery attempts",
    ),
    "replay_webhook": Route(
        "POST",
        "/webhooks/{webhook_id}/replay",
        Group.WEBHOOKS,
        "Deliver the account's events again from a moment on",
        202,
    ),
    "test_webhook": Route(
        "POST", "/webhooks/{webhook_id}/test", Group.WEBHOOKS, "Send a test event", 202
    ),
    "create_team": Route("POST", "/teams", Group.TEAMS, "Create a team", 201),
    "my_teams": Route("GET", "/me/teams", Group.TEAMS, "My teams"),
    "save_profile": Route("PUT", "/me", Group.TEAMS, "Save my profile"),
    "get_profile": Route("GET", "/users/{user_id}", Group.TEAMS, "A user's profile"),
    "add_member": Route("POST", "/teams/{team_id}/members", Group.TEAMS, "Add a member", 201),
    "remove_member": Route(
        "DELETE", "/teams/{team_id}/members/{user_id}", Group.TEAMS, "Remove a member", 204
    ),
}


def routes_of(group: Group) -> dict[str, Route]:
    """The routes one handler group serves."""
    return {name: route for name, route in ROUTES.items() if route.group is group}


def resolver_rule(route: Route) -> str:
    """The path in Powertools' syntax (``<id>`` instead of ``{id}``)."""
    return route.path.replace("{", "<").replace("}", ">")
