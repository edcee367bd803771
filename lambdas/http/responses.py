"""What a route answers, as the OpenAPI document declares it: its success status with the
headers it carries, a 304 where it takes ``If-None-Match``, and only the error statuses it can
answer, each with the one error body whose ``code`` is one of `ErrorCode`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from http import HTTPStatus

from aws_lambda_powertools.event_handler.openapi.types import (
    OpenAPIResponse,
    OpenAPIResponseContentSchema,
    OpenAPIResponseHeader,
)
from pydantic import BaseModel

from incidents.access.models import API_KEY_ID
from incidents.account_limits import AccountLimits
from incidents.alerts.models import INTEGRATION_ID
from incidents.events_out.webhook_models import WEBHOOK_ID
from incidents.heartbeats.models import HEARTBEAT_NAME
from incidents.maintenance.models import WINDOW_ID
from incidents.models import (
    ESCALATION_POLICY_ID,
    FEED_TOKEN,
    INCIDENT_ID,
    OVERRIDE_ID,
    PARTICIPANT_ID,
    SCHEDULE_ID,
    TEAM_ID,
    USER_ID,
)
from lambdas.routes import Route


class ErrorCode(StrEnum):
    """Every ``code`` an error body can carry (the API page's table says when)."""

    BAD_REQUEST = "bad_request"
    VALIDATION_ERROR = "validation_error"
    INVALID_JSON = "invalid_json"
    INVALID_CURSOR = "invalid_cursor"
    INVALID_IF_MATCH = "invalid_if_match"
    INVALID_URL = "invalid_url"
    INVALID_CODE = "invalid_code"
    TOO_MANY_PARTICIPANTS = "too_many_participants"
    TOO_MANY_TEAMS = "too_many_teams"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    VERSION_CONFLICT = "version_conflict"
    CONFLICT = "conflict"
    LAST_MEMBER = "last_member"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    REQUEST_IN_PROGRESS = "request_in_progress"
    TOO_MANY_WEBHOOKS = "too_many_webhooks"
    LIMIT_REACHED = "limit_reached"
    TOO_MANY_ROTATIONS = "too_many_rotations"
    CODE_EXPIRED = "code_expired"
    TOO_MANY_ATTEMPTS = "too_many_attempts"
    ALREADY_VERIFIED = "already_verified"
    CODE_SENT_RECENTLY = "code_sent_recently"
    TOO_MANY_CODES = "too_many_codes"
    PRECONDITION_FAILED = "precondition_failed"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    HEADERS_TOO_LARGE = "headers_too_large"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    THROTTLED = "throttled"
    RATE_LIMITED = "rate_limited"
    INTERNAL_ERROR = "internal_error"
    UNAVAILABLE = "unavailable"


class ErrorBody(BaseModel):
    """Every error response: a stable machine-readable code and a message for people."""

    code: ErrorCode
    message: str


GATEWAY_TOO_LARGE = "the request body is above the API's limit (6 MB)"
"""What a body above what the gateway passes on to Lambda is answered."""


def too_large_message(size: int, limit: int) -> str:
    """What a 413 for a body over its route's limit says."""
    return f"the body is {size:,} bytes; this route takes {limit:,}"


def rate_limited_message(policy: str, limit: int, retry_after: int) -> str:
    """What a 429 for a spent quota says."""
    return f'rate limit "{policy}": {limit} requests a minute; retry in {retry_after} s'


RETRY_AFTER_SECONDS = {429: 1, 503: 5}
"""What ``Retry-After`` says on a throttled (429) or unavailable (503) answer."""
EVERY_ROUTE = (401, 429, 431, 500, 503)
"""What any route can answer: no valid token, throttled, a request line and headers too
large, a bug, a dependency not answering."""


@dataclass(frozen=True)
class ErrorStatus:
    """How the document describes one error status, and the example it shows: the code
    that status most often carries (the API page's table lists every code it can carry)."""

    description: str
    code: ErrorCode
    message: str


ERROR_STATUSES: dict[int, ErrorStatus] = {
    400: ErrorStatus(
        "invalid request, cursor or If-Match", ErrorCode.VALIDATION_ERROR, "body: Field required"
    ),
    401: ErrorStatus(
        "no valid identity claims", ErrorCode.UNAUTHORIZED, "missing or invalid identity claims"
    ),
    403: ErrorStatus(
        "an API key without the route's scope (or a person outside the team)",
        ErrorCode.FORBIDDEN,
        "this API key lacks the scope incidents:write",
    ),
    404: ErrorStatus(
        "not found in your account",
        ErrorCode.NOT_FOUND,
        "incident inc_2J9dTn4Qb1ZkN0aH7cV3mXyPqLs not found",
    ),
    409: ErrorStatus(
        "concurrent change, duplicate, or Idempotency-Key reused",
        ErrorCode.VERSION_CONFLICT,
        "the incident keeps changing; retry",
    ),
    412: ErrorStatus(
        "If-Match is not the current version",
        ErrorCode.PRECONDITION_FAILED,
        "If-Match 3 is not the current version 4",
    ),
    413: ErrorStatus(
        "incident details too large, or a request body above the route's limit (6 MB on most)",
        ErrorCode.PAYLOAD_TOO_LARGE,
        GATEWAY_TOO_LARGE,
    ),
    415: ErrorStatus(
        "the body is not JSON (application/json)",
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        "send the body as application/json",
    ),
    429: ErrorStatus(
        "over a quota (rate_limited, naming it), or the table is busy (throttled); retry "
        "after Retry-After seconds",
        ErrorCode.RATE_LIMITED,
        rate_limited_message("api", 3000, 1),
    ),
    431: ErrorStatus(
        "the request line and headers are above 10,240 bytes (API Gateway's limit; make "
        "dev's front keeps the same)",
        ErrorCode.HEADERS_TOO_LARGE,
        "the request line and headers are above 10,240 bytes",
    ),
    500: ErrorStatus("internal error", ErrorCode.INTERNAL_ERROR, "internal error"),
    503: ErrorStatus(
        "a service behind the API did not answer, or the table refuses writes for now; "
        "retry after Retry-After seconds",
        ErrorCode.UNAVAILABLE,
        "the table did not answer; retry after Retry-After seconds",
    ),
}
ETAG: OpenAPIResponseHeader = {
    "description": 'the incident\'s version, quoted ("3"); on a whole incident (GET) also its '
    'event counter ("3.7": participants and notes move it). Send it as If-Match to change '
    "this version only, or as If-None-Match to be answered 304 while nothing changed",
    "schema": {"type": "string", "pattern": '^"[0-9]+(\\.[0-9]+)?"$'},
}
LOCATION: OpenAPIResponseHeader = {
    "description": "the path of what was created (the incident, webhook, team or membership; "
    "a note: the timeline it is on), with the stage's prefix if any",
    "schema": {"type": "string"},
}
COUNTER_ETAG: OpenAPIResponseHeader = {
    "description": 'the incident\'s event counter, quoted ("7"), on a first page (no cursor): '
    "send it as If-None-Match to be answered 304 while no event was added (events never "
    "change, so a page with the same parameters would be the same)",
    "schema": {"type": "string", "pattern": '^"[0-9]+"$'},
}
PAGE_ETAG: OpenAPIResponseHeader = {
    "description": "on a first page (no cursor), a digest of the events it lists: send it as "
    "If-None-Match to be answered 304 while the page would be the same",
    "schema": {"type": "string", "pattern": '^"[0-9a-f]{24}"$'},
}
RETRY_AFTER: OpenAPIResponseHeader = {
    "description": "seconds to wait before trying again (on a spent quota, the same as the "
    "refusing quota's t in RateLimit)",
    "schema": {"type": "integer", "minimum": 1},
}
QUOTA_HEADERS: dict[str, OpenAPIResponseHeader] = {
    "RateLimit-Policy": {
        "description": "the quotas this request was counted against (IETF draft-11), one list "
        'item each: its name, requests (q) a window of w seconds: "api";q=3000;w=60. On every '
        "answer to a caller the authorizer named; absent on a 401 (no caller to count) and "
        "on a 431 (the gateway's own answer)",
        "schema": {"type": "string"},
    },
    "RateLimit": {
        "description": "what is left of each quota (r) and the seconds until more is (t, "
        'draft-11; 0: it is whole): "api";r=2999;t=1',
        "schema": {"type": "string"},
    },
}
PATH_PATTERNS = {
    "incident_id": INCIDENT_ID,
    "team_id": TEAM_ID,
    "user_id": USER_ID,
    "participant_id": PARTICIPANT_ID,
    "webhook_id": WEBHOOK_ID,
    "integration_id": INTEGRATION_ID,
    "key_id": API_KEY_ID,
    "name": HEARTBEAT_NAME,
    "window_id": WINDOW_ID,
    "schedule_id": SCHEDULE_ID,
    "override_id": OVERRIDE_ID,
    "token": FEED_TOKEN,
    "policy_id": ESCALATION_POLICY_ID,
}
"""The pattern of each id (or name) in a path, for the example of a malformed one."""


LINK_PAGES = {
    200: "the incident and a button for each action left; after a POST, the action done",
    400: "the form names no action the page offers (a page); a query parameter or a path "
    "the route does not take (the API's JSON error)",
    404: "no such link (mistyped or made up), or its incident was deleted (a page); a path "
    "no route can be (the API's JSON error)",
    409: "the incident kept changing meanwhile: nothing was done, try again",
    410: "the link was used (it acts once) or expired",
    415: "not the page's form (application/x-www-form-urlencoded)",
    429: "over the account's API quota",
}
"""What a page's link answers, each an HTML page (`lambdas.http.link_pages`)."""
HTML_PAGE: dict[str, OpenAPIResponseContentSchema] = {"text/html": {"schema": {"type": "string"}}}
OUTSIDE_HANDLERS = (431, 500, 503)
"""What any route can answer before or beside its handler's own answer, in JSON."""


def documented_responses(route: Route) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses of `route`: its success, a 304 if conditional, its errors (a
    page's link: HTML pages, but for what no handler answers)."""
    if route.page_link:
        return _link_responses(route)
    responses: dict[int, OpenAPIResponse] = {route.status: _success(route)}
    tag = _etag(route)
    if tag is not None and (route.conditional or route.counter_tag or route.page_tag):
        responses[HTTPStatus.NOT_MODIFIED] = {
            "description": "If-None-Match names the current version: not changed, no body",
            "headers": {"ETag": tag, **QUOTA_HEADERS},
        }
    authorized = (403,) if route.gateway_authorized else ()  # a key without its scope
    for status in sorted({*route.errors, *EVERY_ROUTE, *authorized}):
        responses[status] = _error(route, status)
    return responses


def _error(route: Route, status: int) -> OpenAPIResponse:
    """An error answer of `route`: the API's JSON error, with its example."""
    shown = error_status(route, status)
    example = {"code": shown.code.value, "message": example_message(route, status)}
    error: OpenAPIResponse = {
        "description": shown.description,
        "content": {
            "application/json": {
                "model": ErrorBody,
                "examples": {example["code"]: {"value": example}},
            }
        },
        "headers": {**QUOTA_HEADERS},
    }
    if status in (429, 503):
        error["headers"]["Retry-After"] = RETRY_AFTER
    return error


def _link_responses(route: Route) -> dict[int, OpenAPIResponse]:
    responses: dict[int, OpenAPIResponse] = {
        status: {
            "description": LINK_PAGES[status],
            "content": dict(HTML_PAGE),
            "headers": {**QUOTA_HEADERS},
        }
        for status in sorted({route.status, *route.errors, HTTPStatus.TOO_MANY_REQUESTS})
    }
    responses[HTTPStatus.TOO_MANY_REQUESTS]["headers"]["Retry-After"] = RETRY_AFTER
    for before in (HTTPStatus.BAD_REQUEST, HTTPStatus.NOT_FOUND):
        # a query the route lacks, a path it cannot be: refused before the handler, in JSON
        if before in responses:
            responses[before]["content"] = {**_error(route, before)["content"], **HTML_PAGE}
    for outside in OUTSIDE_HANDLERS:
        responses[outside] = _error(route, outside)
    return responses


def example_message(route: Route, status: int) -> str:
    """The message of the example error `route` shows for `status`: what it answers to the
    commonest mistake of its kind (an alert without a summary, a body missing, a limit too
    high, a malformed id in the path)."""
    if status == HTTPStatus.BAD_REQUEST:
        return route.bad_request or _bad_request_message(route)
    if status == HTTPStatus.REQUEST_ENTITY_TOO_LARGE and route.max_body is not None:
        return too_large_message(route.max_body + 1, route.max_body)
    if status == HTTPStatus.TOO_MANY_REQUESTS and route.integration_key:
        return rate_limited_message("integration", 3000, 1)
    return error_status(route, status).message


def error_status(route: Route, status: int) -> ErrorStatus:
    """How the document describes `status` on `route`: a create that an account limit
    counts shows that limit's 409, at its default value."""
    if status == HTTPStatus.CONFLICT and route.limited is not None:
        reached = route.limited.reached(AccountLimits().of(route.limited))
        return ErrorStatus(
            f"an account limit reached ({reached.code}: the message names it), a duplicate, "
            "or a concurrent change",
            ErrorCode.LIMIT_REACHED,
            str(reached),
        )
    return ERROR_STATUSES[status]


def limit_description(route: Route) -> str | None:
    """The operation's description of the account limit its create counts against."""
    if route.limited is None:
        return None
    default = AccountLimits().of(route.limited)
    return (
        f"An account holds at most {default:,} {route.limited.noun} by default (each "
        f"deployment sets its own limit): one more is answered 409 "
        f'{{"code": "limit_reached", "message": "{route.limited.reached(default)}"}}. '
        "A delete frees a place at once; concurrent creates never pass the limit."
    )


def _bad_request_message(route: Route) -> str:
    names = [part[1:-1] for part in route.path.split("/") if part.startswith("{")]
    ids = [name for name in names if name in PATH_PATTERNS]
    if route.integration_key and not ids:  # an alert's body
        kind = "" if route.path.endswith("/change/enqueue") else ".trigger"
        return f"body{kind}.payload.summary: Field required"
    if 415 in route.errors:  # it takes a JSON body
        return "body: Field required"
    if ids:
        return f"path.{ids[0]}: String should match pattern '{PATH_PATTERNS[ids[0]]}'"
    if names == ["number"]:
        return (
            "path.number: Value error, must be a positive decimal number without leading "
            "zeros, e.g. 42"
        )
    if route.method == "GET":  # a list: every one takes a limit
        return "query.limit: Input should be less than or equal to 100"
    return ERROR_STATUSES[HTTPStatus.BAD_REQUEST].message


def _etag(route: Route) -> OpenAPIResponseHeader | None:
    """The ``ETag`` header the route answers with, if any."""
    if route.counter_tag:
        return COUNTER_ETAG
    if route.page_tag:
        return PAGE_ETAG
    return ETAG if route.etag else None


def _success(route: Route) -> OpenAPIResponse:
    headers = {
        **({"ETag": tag} if (tag := _etag(route)) else {}),
        **({"Location": LOCATION} if route.status == HTTPStatus.CREATED else {}),
        **QUOTA_HEADERS,
    }
    description = "done; no body" if route.status == HTTPStatus.NO_CONTENT else "success"
    return {"description": description, "headers": headers}
