"""The HTML pages a page's link answers: a person taps it on a phone at 3 a.m., so every
answer is a page that says what happened (an error too), never JSON. Each is private and
uncached (its URL is a credential), leaks no URL through ``Referer``, cannot be framed
(a framed button is a click taken by another site), and runs no script."""

from __future__ import annotations

import html
from datetime import datetime
from http import HTTPStatus
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from incidents.errors import DomainError, NotFoundError, VersionConflictError
from incidents.models import IncidentSummary, Status, parse_timestamp
from incidents.notifications.links import (
    Action,
    LinkExpiredError,
    LinkNotFoundError,
    LinkUsedError,
    PageLink,
    incident_of,
    read_link,
    use_link,
)
from lambdas.http.admission import API_QUOTA
from lambdas.http.quotas import admit, quotas
from lambdas.http.statuses import CountedRefusalError
from lambdas.runtime import store

HTML = "text/html; charset=utf-8"
HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
STYLE = (
    "body{font:18px/1.4 system-ui,sans-serif;max-width:34em;margin:2em auto;padding:0 1em}"
    "button{font-size:1.1em;padding:.6em 1.2em;margin:.3em .6em .3em 0}"
)
DONE = {Action.ACKNOWLEDGE: "acknowledged", Action.RESOLVE: "resolved"}


def page(status: int, title: str, *paragraphs: str, headers: dict[str, str] | None = None
         ) -> Response[str]:  # fmt: skip
    """An HTML answer: a heading and paragraphs (given as HTML, their text escaped by the
    caller)."""
    body = "".join(f"<p>{paragraph}</p>" for paragraph in paragraphs)
    document = (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style>"
        f"<h1>{html.escape(title)}</h1>{body}</html>"
    )
    return Response(
        status_code=status, content_type=HTML, body=document, headers={**HEADERS, **(headers or {})}
    )


def incident_line(incident: IncidentSummary) -> str:
    """The incident in one line: number, title, severity, status."""
    return (
        f"<strong>#{incident.number} {html.escape(incident.title)}</strong>: severity "
        f"{incident.severity.value}, {incident.status.value.lower()}."
    )


def link_page(link: PageLink, incident: IncidentSummary, now: datetime) -> Response[str]:
    """What a link shows at `now`: the incident and a button for each action still open
    (an expired or used link: only that)."""
    if link.used_at is not None:
        return used_page(link)
    if parse_timestamp(link.expires_at) <= now:
        return refused_page(
            HTTPStatus.GONE, "This link cannot act", f"it expired at {link.expires_at}"
        )
    if incident.status is Status.RESOLVED:
        return page(200, f"Incident #{incident.number}", incident_line(incident))
    actions = [Action.RESOLVE]
    if incident.status is Status.TRIGGERED:
        actions.insert(0, Action.ACKNOWLEDGE)
    buttons = "".join(
        f'<button name=action value="{action.value}">{action.value.title()}</button>'
        for action in actions
    )
    return page(
        200,
        f"Incident #{incident.number}",
        incident_line(incident),
        f"<form method=post>{buttons}</form>",
        f"This link acts once, as you, until {html.escape(link.expires_at)}.",
    )


def used_page(link: PageLink) -> Response[str]:
    """A link that acted already: when, and what it did (not the incident as it is now: a
    used link shows nothing more)."""
    done = DONE[link.used_for] if link.used_for is not None else "used"
    return page(
        HTTPStatus.GONE,
        "This link was used",
        f"It {done} the incident at {html.escape(str(link.used_at))}; it acts once.",
    )


def done_page(action: Action, incident: IncidentSummary) -> Response[str]:
    """An action taken."""
    return page(200, f"Incident #{incident.number} {DONE[action]}", incident_line(incident))


def refused_page(
    status: int, title: str, reason: str, headers: dict[str, str] | None = None
) -> Response[str]:
    """A link that cannot act (unknown, expired, used meanwhile, over a quota)."""
    return page(status, title, html.escape(reason), headers=headers)


def answer_link(token: str, event: APIGatewayProxyEvent | None) -> Response[str]:
    """The page a link answers: what it shows (`event` None: a GET) or what its form's
    action did (a POST's `event`); every refusal a page too. Its account's API quota
    is drawn once the link names the account."""
    try:
        link = read_link(store(), token)
        headers = admit(link.account_id, [(API_QUOTA, quotas().api)])
        if event is None:
            response = link_page(link, incident_of(store(), link), store().clock())
        else:
            action = form_action(event)
            response = done_page(action, use_link(store(), token, link, action))
    except CountedRefusalError as refusal:
        return refused_page(429, "Too many requests", str(refusal.error), refusal.headers)
    except (DomainError, FormError) as refused:
        status, title = _refusal(refused)
        return refused_page(status, title, str(refused))
    response.headers.update(headers)
    return response


REFUSALS: list[tuple[type[Exception], int, str]] = [
    (LinkNotFoundError, HTTPStatus.NOT_FOUND, "Unknown link"),
    (NotFoundError, HTTPStatus.NOT_FOUND, "The incident is gone"),
    (LinkUsedError, HTTPStatus.GONE, "This link cannot act"),
    (LinkExpiredError, HTTPStatus.GONE, "This link cannot act"),
    (VersionConflictError, HTTPStatus.CONFLICT, "Nothing was done"),
]
"""Each refusal's status and heading, the most specific first."""


def _refusal(error: Exception) -> tuple[int, str]:
    if isinstance(error, FormError):
        return error.status, "Nothing was done"
    for kind, status, title in REFUSALS:
        if isinstance(error, kind):
            return status, title
    raise error


class FormError(Exception):
    """A POST that names no action this page offers."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


FORM = "application/x-www-form-urlencoded"
MAX_FORM_BYTES = 1024
MAX_FORM_FIELDS = 8


def form_action(event: APIGatewayProxyEvent) -> Action:
    """The action a link's form posted (``action=acknowledge`` or ``action=resolve``, and
    nothing else: the page's form sends no other field)."""
    media_type = (event.headers.get("content-type") or "").split(";")[0].strip().lower()
    if media_type != FORM:
        raise FormError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"post the page's form ({FORM})")
    fields = _fields(event.decoded_body or "")
    named = fields.get("action", [])
    if set(fields) != {"action"} or len(named) != 1 or named[0] not in set(Action):
        choices = " or ".join(f"action={action.value}" for action in Action)
        raise FormError(HTTPStatus.BAD_REQUEST, f"the form takes {choices}")
    return Action(named[0])


def _fields(body: str) -> dict[str, list[str]]:
    """A small form's fields (none for a body no form of a link's page would send)."""
    if len(body) > MAX_FORM_BYTES:
        return {}
    try:
        return parse_qs(body, max_num_fields=MAX_FORM_FIELDS)
    except ValueError:  # more fields than that
        return {}
