"""The API's OpenAPI document: the three handlers' generated documents merged into one.

``python -m local.openapi.document`` (``make openapi``) writes it to ``openapi.json``; a test
checks that the checked-in file is current. The local gateway serves it at
``/openapi.json`` and Swagger UI (shipped inside Powertools) at ``/docs``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html

from incidents.events_out.webhook_models import NOTHING_YET
from incidents.notifications.links import Action
from lambdas.http.link_pages import FORM
from lambdas.http.responses import QUOTA_HEADERS, RETRY_AFTER
from lambdas.routes import ROUTES, Group
from local.demo.contacts import method_body, rule_body
from local.demo.data import DemoSize, demo_accounts
from local.demo.policies import policy_body
from local.demo.schedules import override_body, schedule_body
from local.engines.clients import use_local_credentials
from local.openapi.webhooks import WEBHOOK, add_webhooks
from local.webhook_receiver import RECEIVER_URL

TITLE = "Incidents API"
VERSION = "1.0.0"
DOCUMENT = Path(__file__).resolve().parents[2] / "openapi.json"
SECURITY_SCHEME = {
    "Authorization": {  # named as the header: renderers that show the scheme's key show it
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "A Cognito ID token (locally: a dev token printed by make dev), or an "
        "account's API key as Bearer mk_… (its scopes decide the routes it may call).",
    },
    "IntegrationKey": {
        "type": "http",
        "scheme": "bearer",
        "description": "An integration's key (ik_…), for POST /alerts (or send it as the "
        "body's routing_key, or as the whole Authorization header) and heartbeat pings.",
    },
}


NEXT_PAGE = {"cursor": "$response.body#/next_cursor"}
"""The next page of a list read with its defaults (a cursor is bound to the filters it was
issued with, so following it after other filters is a 400 invalid_cursor)."""
Link = tuple[str, dict[str, str], dict[str, str] | None]
"""Target operation, its parameters, and its request body (runtime expressions)."""
LINKS: dict[tuple[str, int], dict[str, Link]] = {
    ("create_incident", 201): {
        **{
            name: (name, {"incident_id": "$response.body#/summary/id"}, None)
            for name in (
                "get_incident",
                "update_incident",
                "resolve_incident",
                "incident_timeline",
            )
        },
        "add_note": (
            "add_note",
            {"incident_id": "$response.body#/summary/id"},
            {"text": "Investigating"},
        ),
        "add_participant": (
            "add_participant",
            {"incident_id": "$response.body#/summary/id"},
            {"participant_id": "$response.body#/summary/created_by", "role": "responder"},
        ),
    },
    ("add_participant", 200): {
        "remove_participant": (
            "remove_participant",
            {
                "incident_id": "$response.body#/incident/id",
                "participant_id": "$response.body#/participant_id",
            },
            None,
        )
    },
    ("create_team", 201): {
        "team_incidents": ("team_incidents", {"team_id": "$response.body#/id"}, None),
        "add_member": (
            "add_member",
            {"team_id": "$response.body#/id"},
            {"user_id": "$response.body#/created_by"},
        ),
    },
    ("add_member", 201): {
        "remove_member": (
            "remove_member",
            {"team_id": "$response.body#/team_id", "user_id": "$response.body#/user_id"},
            None,
        )
    },
    ("save_profile", 200): {
        "get_profile": ("get_profile", {"user_id": "$response.body#/id"}, None),
    },
    ("my_incidents", 200): {"next_page": ("my_incidents", NEXT_PAGE, None)},
    ("my_teams_incidents", 200): {"next_page": ("my_teams_incidents", NEXT_PAGE, None)},
    ("team_incidents", 200): {
        "next_page": ("team_incidents", {**NEXT_PAGE, "team_id": "$request.path.team_id"}, None)
    },
    ("account_incidents", 200): {"next_page": ("account_incidents", NEXT_PAGE, None)},
    ("incident_timeline", 200): {
        "next_page": (
            "incident_timeline",
            {**NEXT_PAGE, "incident_id": "$request.path.incident_id"},
            None,
        )
    },
    ("account_events", 200): {"next_page": ("account_events", NEXT_PAGE, None)},
}
"""OpenAPI links: what a response lets a client (and schemathesis' stateful phase) call next."""


def openapi_document(examples: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every route of every handler group, with shared components, in one document;
    `examples` adds parameter examples only a running table knows (its demo incident).

    Importing a handler module builds its clients (nothing is called), which needs a
    region and a table name; placeholders do when none is configured.
    """
    use_local_credentials()
    os.environ.setdefault("TABLE_NAME", "openapi")
    merged: dict[str, Any] = {}
    for group in Group:
        app = importlib.import_module(f"lambdas.{group.value}").app
        document = json.loads(app.get_openapi_json_schema(title=TITLE, version=VERSION))
        if not merged:
            merged = document
            continue
        for path, operations in document["paths"].items():
            merged["paths"].setdefault(path, {}).update(operations)
        merged["components"]["schemas"].update(document["components"]["schemas"])
    merged["paths"] = dict(sorted(merged["paths"].items()))
    merged["components"]["schemas"] = dict(sorted(merged["components"]["schemas"].items()))
    merged["components"]["securitySchemes"] = SECURITY_SCHEME
    merged["security"] = [{"Authorization": []}]
    _integration_key_routes(merged)
    _token_routes(merged)
    _shared_headers(merged)
    _name_inline_bodies(merged)
    _add_links(merged)
    _no_null_parameters(merged)
    _standard_bounds(merged)
    _no_content_without_body(merged)
    _demo_examples(merged, examples or {})
    _no_unreachable_422(merged)
    _participant_discriminator(merged)
    _request_defaults_described(merged)
    add_webhooks(merged)
    _shared_responses(merged)
    return merged


def _integration_key_routes(document: dict[str, Any]) -> None:
    """The routes machines call with an integration key say so (their handler checks it);
    the header is optional there, as the key may come in the body (``routing_key``)."""
    for route in ROUTES.values():
        if route.integration_key:
            operation = document["paths"][route.path][route.method.lower()]
            in_body = route.method == "POST" and "{" not in route.path  # routing_key
            operation["security"] = [{"IntegrationKey": []}, *([{}] if in_body else [])]


FEED_EXAMPLE = """BEGIN:VCALENDAR
PRODID:-//dynashard-incidents//on-call schedules//EN
VERSION:2.0
NAME:Payments on-call
BEGIN:VEVENT
UID:3f0c2a7d9b1e4c5a8d6f0e2b4a6c8e0d@sched_2pRkZ3xq0t8lV1uJ9cY4bWmN7sE
DTSTART:20260105T090000Z
DTEND:20260112T090000Z
SUMMARY:On call: Ada Lovelace
END:VEVENT
END:VCALENDAR
"""


LINK_FORM = {
    "title": "PageLinkForm",
    "description": "the button pressed on a page's link",
    "type": "object",
    "required": ["action"],
    "properties": {"action": {"type": "string", "enum": [a.value for a in Action]}},
    "additionalProperties": False,
}
"""What a link's page posts."""


def _token_routes(document: dict[str, Any]) -> None:
    """A calendar feed's URL is its credential (no header: calendar apps send none), and
    it answers iCalendar, not JSON; a page's link too, answering HTML, its POST a form."""
    for route in ROUTES.values():
        if not (route.feed_token or route.page_link):
            continue
        operation = document["paths"][route.path][route.method.lower()]
        operation["security"] = [{}]
        if route.feed_token:
            success = operation["responses"][str(route.status)]
            success["content"] = {
                "text/calendar": {"schema": {"type": "string"}, "example": FEED_EXAMPLE}
            }
        elif route.method == "POST":
            document["components"]["schemas"][LINK_FORM["title"]] = LINK_FORM
            reference = {"$ref": f"#/components/schemas/{LINK_FORM['title']}"}
            form = {"schema": reference, "example": {"action": Action.RESOLVE.value}}
            operation["requestBody"] = {"required": True, "content": {FORM: form}}


SHARED_HEADERS = {**QUOTA_HEADERS, "Retry-After": RETRY_AFTER}
"""Headers declared on many responses: written once, in ``components.headers``."""


def _shared_headers(document: dict[str, Any]) -> None:
    """Each of `SHARED_HEADERS` a reference to its one component, not a copy a response."""
    document["components"]["headers"] = dict(SHARED_HEADERS)
    for operation in _operations(document).values():
        for response in operation["responses"].values():
            for name, header in response.get("headers", {}).items():
                if name in SHARED_HEADERS:
                    assert header == SHARED_HEADERS[name], f"{name} declared two ways"
                    response["headers"][name] = {"$ref": f"#/components/headers/{name}"}


def _shared_responses(document: dict[str, Any]) -> None:
    """Each error answer many operations give word for word (``401``, ``503``) written once,
    in ``components.responses``, and referenced: Swagger UI parses the whole document again
    at each operation a reader opens, so copies made every opening slower."""
    uses: dict[str, Counter[str]] = defaultdict(Counter)
    for operation in _operations(document).values():
        for status, response in operation["responses"].items():
            uses[status][json.dumps(response, sort_keys=True)] += 1
    shared = {}
    for status, answers in uses.items():
        (answer, count), *_ = answers.most_common(1)
        if int(status) >= 400 and count > 1:
            shared[status] = (HTTPStatus(int(status)).phrase.title().replace(" ", ""), answer)
    document["components"]["responses"] = {
        name: json.loads(answer) for name, answer in sorted(shared.values())
    }
    for operation in _operations(document).values():
        for status, response in operation["responses"].items():
            name, answer = shared.get(status, ("", ""))
            if json.dumps(response, sort_keys=True) == answer:
                operation["responses"][status] = {"$ref": f"#/components/responses/{name}"}


ALERT_EVENT = (
    "AlertEvent",
    "One alert, as PagerDuty's Events API v2 takes it (a trigger, or an acknowledge or "
    "resolve of its dedup_key, told apart by event_action), or a group of them as "
    "Alertmanager's and Grafana's webhooks send it (alerts, each with its fingerprint).",
)
INLINE_BODIES = {"send_alert": ALERT_EVENT, "enqueue_event": ALERT_EVENT}
"""Request bodies Powertools writes inline (a discriminated union): names, descriptions."""


def _name_inline_bodies(document: dict[str, Any]) -> None:
    """Each inline request body as a component of its own, so generated clients name its
    type (``AlertEvent``) instead of ``Body``."""
    schemas = document["components"]["schemas"]
    for operation in _operations(document).values():
        named = INLINE_BODIES.get(operation.get("operationId", ""))
        if named is None:
            continue
        name, description = named
        media = operation["requestBody"]["content"]["application/json"]
        schemas[name] = {**media["schema"], "title": name, "description": description}
        media["schema"] = {"$ref": f"#/components/schemas/{name}"}
    document["components"]["schemas"] = dict(sorted(schemas.items()))


BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}
"""Pydantic's constraint names that Powertools copies into parameter schemas as they are,
and the JSON Schema keywords generators and validators read."""


def _standard_bounds(document: dict[str, Any]) -> None:
    """A parameter's bounds as ``minimum``/``maximum``: written as ``ge``/``le``, every
    generator and validator drops them (``limit: 1000`` would type-check, then be a 400)."""
    for operation in _operations(document).values():
        for parameter in operation.get("parameters", []):
            schema = parameter["schema"]
            for name, keyword in BOUNDS.items():
                if name in schema:
                    schema[keyword] = schema.pop(name)


def _no_content_without_body(document: dict[str, Any]) -> None:
    """A 204 or 304 declares no content at all: Powertools writes the route's JSON (or an
    empty ``content``, which makes some generators drop the status from the response union)."""
    for operation in _operations(document).values():
        for status in ("204", "304"):
            operation["responses"].get(status, {}).pop("content", None)


def _request_defaults_described(document: dict[str, Any]) -> None:
    """A request field's default said in its description, not as ``default``: generators
    such as openapi-typescript type a field with a default as always present, which in a
    request would make the client send what the server would fill in."""
    schemas = document["components"]["schemas"]
    for name in _request_schemas(document):
        for field in schemas[name].get("properties", {}).values():
            if "default" in field:
                default = json.dumps(field.pop("default"))
                described = field.get("description", "").rstrip(".")
                field["description"] = f"{described}. Default: {default}".lstrip(". ")


def _request_schemas(document: dict[str, Any]) -> set[str]:
    """The component schemas request bodies name (and the shapes those are one of)."""
    names: set[str] = set()
    for operation in _operations(document).values():
        content = operation.get("requestBody", {}).get("content", {})
        for media in content.values():
            names.add(media["schema"]["$ref"].rsplit("/", 1)[-1])
    schemas = document["components"]["schemas"]
    for name in list(names):
        for choice in schemas[name].get("oneOf", []):
            names.add(choice["$ref"].rsplit("/", 1)[-1])
    return names


def _no_unreachable_422(document: dict[str, Any]) -> None:
    """Powertools documents ``422 HTTPValidationError`` on every operation; this API answers
    validation errors with ``400 validation_error`` (documented with the other errors), so
    the 422 and the schemas only it used go: generated clients would carry a dead branch."""
    for operation in _operations(document).values():
        operation["responses"].pop("422", None)
    schemas = document["components"]["schemas"]
    for name in ("HTTPValidationError", "ResponseValidationError", "ValidationError"):
        if f'"#/components/schemas/{name}"' not in json.dumps(document):
            schemas.pop(name, None)


def _participant_discriminator(document: dict[str, Any]) -> None:
    """`AddParticipant`'s two shapes as schemas of their own, told apart by ``role``."""
    schemas = document["components"]["schemas"]
    kinds = schemas["AddParticipant"]["oneOf"]
    mapping = {}
    for kind in kinds:
        schemas[kind["title"]] = kind
        for role in kind["properties"]["role"]["enum"]:
            mapping[role] = f"#/components/schemas/{kind['title']}"
    schemas["AddParticipant"]["oneOf"] = [
        {"$ref": f"#/components/schemas/{kind['title']}"} for kind in kinds
    ]
    schemas["AddParticipant"]["discriminator"] = {"propertyName": "role", "mapping": mapping}
    document["components"]["schemas"] = dict(sorted(schemas.items()))


DEMO_SINCE, DEMO_UNTIL = "2026-01-05T00:00:00Z", "2026-02-01T00:00:00+01:00"
"""A window around `make dev`'s demo incidents (created from 5 January 2026 on)."""
DEMO_LAST_DAY = "2026-01-31"
"""The window's last day, for the insights' days (their `until` is a day, not an instant)."""
MAINTENANCE_FROM, MAINTENANCE_TO = "2099-01-06T22:00:00Z", "2099-01-07T02:00:00Z"
EDIT_FROM = "2099-01-01T00:00:00Z"
"""A schedule edit's example takes effect far ahead: trying it changes nothing you see."""
"""A maintenance window's example: far ahead, as `NOTHING_YET` is, so trying it schedules
one that suppresses nothing (and that can be deleted)."""
OPERATION_EXAMPLES = {
    "delete_maintenance_window": {"window_id": "scheduled_window_id"},
    "delete_schedule": {"schedule_id": "scratch_schedule_id"},
    "delete_escalation_policy": {"policy_id": "scratch_policy_id"},
    **{
        name: {"user_id": "me_user_id"}
        for name in (
            "list_contact_methods",
            "create_contact_method",
            "get_contact_method",
            "replace_contact_method",
            "list_notification_rules",
            "create_notification_rule",
            "get_notification_rule",
            "replace_notification_rule",
        )
    },
    "delete_contact_method": {
        "user_id": "me_user_id",
        "contact_method_id": "scratch_contact_method_id",
    },
    "verify_contact_method": {
        "user_id": "me_user_id",
        "contact_method_id": "verify_contact_method_id",
    },
    "send_contact_method_verification": {
        "user_id": "me_user_id",
        "contact_method_id": "resend_contact_method_id",
    },
    "delete_notification_rule": {
        "user_id": "me_user_id",
        "notification_rule_id": "scratch_notification_rule_id",
    },
    "schedule_feed": {"token": "schedule_feed_token"},
    "user_feed": {"token": "user_feed_token"},
    "page_link": {"token": "page_link_token"},
    "escalate_incident": {"incident_id": "paged_incident_id"},
    "reassign_incident": {"incident_id": "paged_incident_id"},
    "use_page_link": {"token": "page_link_token"},
}
"""Path parameters whose example differs for one operation, and the `known` value it takes:
``make dev``'s demo window is ongoing (it can be ended), its scheduled one can be deleted;
its scratch schedule is there to be deleted."""


def _demo_examples(document: dict[str, Any], known: Mapping[str, str]) -> None:
    """Examples that work as they are against ``make dev``'s demo data, signed in as the
    first demo user (printed first by ``make dev``): Swagger UI prefills them. The cursor
    has none: any string but a page's ``next_cursor`` is a 400."""
    account = demo_accounts(DemoSize())[0]
    me, colleague = account.users[0].id, account.users[1].id
    team = account.teams[0].id  # the first user is in every team
    parameters: dict[str, Any] = {
        "team_id": team,
        "team": [team],
        "user_id": colleague,
        "participant_id": colleague,
        "number": 1,
        "since": DEMO_SINCE,
        "until": DEMO_UNTIL,
        "webhook_id": WEBHOOK,  # make dev's document names its demo webhook instead
        **{name: value for name, value in known.items() if name != "routing_key"},
    }
    bodies: dict[str, dict[str, Any]] = {
        "create_incident": {
            "title": "Checkout: p99 latency above 2 s",
            "severity": "SEV2",
            "assignees": [me],
            "teams": [team],
            "details": {"runbook": "https://runbooks.example.com/checkout-latency"},
        },
        "update_incident": {"status": "ACKNOWLEDGED"},
        "add_participant": {"participant_id": colleague, "role": "responder"},
        "save_profile": {"name": account.users[0].name, "email": account.users[0].email},
        "create_team": {"name": "Payments on-call"},
        "add_member": {"user_id": colleague},
        "add_note": {"text": "Rolled back deploy 4812; p99 is back under 300 ms"},
        "create_webhook": {  # resolutions only: trying it adds few deliveries
            "url": RECEIVER_URL,
            "event_types": ["incident.resolved"],
            "description": "make dev's receiver",
        },
        "update_webhook": {"enabled": True},
        "create_integration": {"name": "Alertmanager", "team_id": team},
        "update_integration": {
            "default_severity": "SEV2",
            "acknowledgement_timeout": 1800,
            "alert_grouping": {"type": "time", "time_window": 600},
        },
        "create_api_key": {"name": "CI", "scopes": ["incidents:read"]},
        "send_alert": {
            "routing_key": known.get("routing_key", "ik_…"),  # make dev's, in its document
            "event_action": "trigger",
            "dedup_key": "db-1/disk",
            "payload": {
                "summary": "disk 95% full on db-1",
                "source": "db-1",
                "severity": "critical",
            },
        },
    }
    bodies["enqueue_event"] = bodies["send_alert"]
    bodies["enqueue_change"] = {
        "routing_key": bodies["send_alert"]["routing_key"],
        "payload": {"summary": "deployed checkout 4812", "source": "ci"},
        "links": [{"href": "https://ci.example.com/runs/4812", "text": "the run"}],
    }
    bodies["replay_webhook"] = {"since": NOTHING_YET}
    bodies["create_heartbeat"] = {
        "name": "nightly-backup",
        "interval": 1,
        "interval_unit": "days",
        "integration_id": known.get("integration_id", "intg_…"),
    }
    bodies["update_heartbeat"] = {"interval": 12, "interval_unit": "hours"}
    bodies["create_schedule"] = schedule_body(account, "Search on-call")
    bodies["preview_schedule"] = schedule_body(account, "Search on-call")
    bodies["update_schedule"] = {**schedule_body(account), "effective_at": EDIT_FROM}
    schedule_id = known.get("schedule_id", "sched_…")
    bodies["create_escalation_policy"] = policy_body(account, schedule_id, "Search on-call")
    bodies["replace_escalation_policy"] = policy_body(account, schedule_id)
    method_id = known.get("contact_method_id", "cm_…")
    bodies["create_contact_method"] = method_body(account, "Home email")
    bodies["replace_contact_method"] = method_body(account, "Work email")
    bodies["verify_contact_method"] = {"code": known.get("verification_code", "123456")}
    bodies["create_notification_rule"] = rule_body(method_id, 5)
    bodies["replace_notification_rule"] = rule_body(method_id, 0)
    bodies["escalate_incident"] = {"escalation_level": 1}
    bodies["reassign_incident"] = {"escalation_policy_id": known.get("policy_id", "ep_…")}
    bodies["create_override"] = override_body(account)
    bodies["update_user"] = {"time_zone": "America/Chicago"}
    bodies["create_maintenance_window"] = {
        "team_id": team,
        "start_time": MAINTENANCE_FROM,
        "end_time": MAINTENANCE_TO,
        "description": "Database upgrade: failover to the replica",
        "resolve_on_end": True,
    }
    insights = {"from": DEMO_SINCE[:10], "until": DEMO_LAST_DAY, "team": team}
    for operation_id, operation in _operations(document).items():
        own = OPERATION_EXAMPLES.get(operation_id, {})
        given = {
            **parameters,
            **(insights if operation_id == "incident_insights" else {}),
            **{name: known[own[name]] for name in own if own[name] in known},
        }
        for parameter in operation.get("parameters", []):
            if parameter["in"] not in ("path", "query"):
                continue
            examples = parameter["schema"].pop("examples", None)
            if parameter["name"] in given:
                parameter["example"] = given[parameter["name"]]
            elif examples:  # Swagger UI prefills a parameter's example, not its schema's
                parameter["example"] = examples[0]
        if operation_id in bodies:
            content = operation["requestBody"]["content"]["application/json"]
            content["example"] = bodies[operation_id]


def _operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        operation["operationId"]: operation
        for methods in document["paths"].values()
        for operation in methods.values()
    }


def _add_links(document: dict[str, Any]) -> None:
    operations = _operations(document)
    for (source, status), links in LINKS.items():
        response = operations[source]["responses"][str(status)]
        response["links"] = {
            name: {
                "operationId": target,
                "parameters": parameters,
                **({"requestBody": body} if body else {}),
            }
            for name, (target, parameters, body) in links.items()
        }


def _no_null_parameters(document: dict[str, Any]) -> None:
    """An optional query or header parameter is one that may be absent, never a ``null``:
    drop the ``null`` alternative pydantic writes for ``X | None``."""
    for operation in _operations(document).values():
        for parameter in operation.get("parameters", []):
            schema = parameter["schema"]
            choices = [c for c in schema.pop("anyOf", []) if c.get("type") != "null"]
            if choices:
                (choice,) = choices
                schema.update(choice)


def openapi_json(document: dict[str, Any]) -> str:
    """`document` as written to ``openapi.json``, indented for readable diffs (``/openapi.json``
    serves it compact, and gzipped to a client that accepts it)."""
    return json.dumps(document, indent=2) + "\n"


def swagger_page(document: dict[str, Any]) -> str:
    """Swagger UI for `document`, with Powertools' bundled assets inlined (works offline)."""
    assets = Path(generate_swagger_html.__code__.co_filename).parent
    return generate_swagger_html(
        spec=json.dumps(document),
        swagger_js=(assets / "swagger-ui-bundle.min.js").read_text(),
        swagger_css=(assets / "swagger-ui.min.css").read_text(),
        swagger_base_url="",
        oauth2_config=None,
        persist_authorization=True,
    )


def main() -> None:
    """Write ``openapi.json`` beside the README."""
    DOCUMENT.write_text(openapi_json(openapi_document()))
    print(f"wrote {DOCUMENT}", file=sys.stderr)


if __name__ == "__main__":
    main()
