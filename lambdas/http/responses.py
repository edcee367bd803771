"""What a route answers, as the OpenAPI document declares it: its success status with the
headers it carries, a 304 where it takes ``If-None-Match``, and only the error statuses it can
answer, each with the one error body whose ``code`` is one of `ErrorCode`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse, OpenAPIResponseHeader
from pydantic import BaseModel

from lambdas.routes import Route


class ErrorCode(StrEnum):
    """Every ``code`` an error body can carry (the API page's table says when)."""

    BAD_REQUEST = "bad_request"
    VALIDATION_ERROR = "validation_error"
    INVALID_JSON = "invalid_json"
    INVALID_CURSOR = "invalid_cursor"
    INVALID_IF_MATCH = "invalid_if_match"
    INVALID_URL = "invalid_url"
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
    TOO_MANY_ROTATIONS = "too_many_rotations"
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
        "invalid request, cursor or If-Match",
        ErrorCode.VALIDATION_ERROR,
        "title: String should have at most 200 characters",
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
        "incident details too large, or a request body above 6 MB",
        ErrorCode.PAYLOAD_TOO_LARGE,
        "the request body is larger than 6 MB",
    ),
    415: ErrorStatus(
        "the body is not JSON (application/json)",
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        "send the body as application/json",
    ),
    429: ErrorStatus(
        "throttled, or over the account's rate limit (rate_limited, naming the policy, with "
        "RateLimit-Policy and RateLimit headers); retry after Retry-After seconds",
        ErrorCode.THROTTLED,
        "too many requests; retry after Retry-After seconds",
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
    "description": "seconds to wait before trying again",
    "schema": {"type": "integer", "minimum": 1},
}


def documented_responses(route: Route) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses of `route`: its success, a 304 if conditional, its errors."""
    responses: dict[int, OpenAPIResponse] = {route.status: _success(route)}
    tag = _etag(route)
    if tag is not None and (route.conditional or route.counter_tag or route.page_tag):
        responses[HTTPStatus.NOT_MODIFIED] = {
            "description": "If-None-Match names the current version: not changed, no body",
            "headers": {"ETag": tag},
        }
    authorized = () if route.integration_key else (403,)  # a key without its scope
    for status in sorted({*route.errors, *EVERY_ROUTE, *authorized}):
        error: OpenAPIResponse = {
            "description": ERROR_STATUSES[status].description,
            "content": {"application/json": {"model": ErrorBody, "examples": _example(status)}},
        }
        if status in (429, 503):
            error["headers"] = {"Retry-After": RETRY_AFTER}
        responses[status] = error
    return responses


def _etag(route: Route) -> OpenAPIResponseHeader | None:
    """The ``ETag`` header the route answers with, if any."""
    if route.counter_tag:
        return COUNTER_ETAG
    if route.page_tag:
        return PAGE_ETAG
    return ETAG if route.etag else None


def _example(status: int) -> dict[str, Any]:
    shown = ERROR_STATUSES[status]
    return {shown.code.value: {"value": {"code": shown.code.value, "message": shown.message}}}


def _success(route: Route) -> OpenAPIResponse:
    headers = {
        **({"ETag": tag} if (tag := _etag(route)) else {}),
        **({"Location": LOCATION} if route.status == HTTPStatus.CREATED else {}),
    }
    success: OpenAPIResponse = {"description": "success"}
    if route.status == HTTPStatus.NO_CONTENT:
        success = {"description": "done; no body"}
    if headers:
        success["headers"] = headers
    return success
