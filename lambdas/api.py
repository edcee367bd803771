"""What every handler shares: a resolver whose every error is JSON ``{"code", "message"}``,
the caller taken from the authorizer's claims, and routes registered from the route table."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any, TypeVar

from aws_lambda_powertools.event_handler import (
    APIGatewayRestResolver,
    CORSConfig,
    Response,
    content_types,
)
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError
from pydantic import BaseModel

from dynashard import (
    DynashardError,
    InvalidCursorError,
    StreamFailedError,
    WriteThrottledError,
    error_code,
    is_throttling,
)
from incidents.errors import DomainError
from incidents.models import ACCOUNT_ID, USER_ID
from incidents.store import Caller
from lambdas.json_body import JsonBodiesOnly, strict_json
from lambdas.routes import REQUEST_HEADERS, ROUTES, resolver_rule
from lambdas.runtime import logger, metrics, tracer
from lambdas.settings import allowed_origins

ACCOUNT_CLAIM = "custom:account_id"
USER_CLAIM = "custom:user_id"
_ACCOUNT_PATTERN = re.compile(ACCOUNT_ID)
_USER_PATTERN = re.compile(USER_ID)

MAX_MESSAGE = 300
"""Characters of an error message at most: enough to say what is wrong, never a payload."""
MAX_LOCATION_PART = 40
CORS_MAX_AGE_SECONDS = 3600

F = TypeVar("F", bound=Callable[..., Any])


class ErrorBody(BaseModel):
    """Every error response: a stable machine-readable code and a message for people."""

    code: str
    message: str


ERROR_STATUSES = {
    400: "invalid request, cursor or If-Match",
    401: "no valid identity claims",
    403: "not a member of the team",
    404: "not found in your account",
    409: "concurrent change, duplicate, or Idempotency-Key reused",
    412: "If-Match is not the current version",
    413: "incident details too large, or a request body above 6 MB",
    415: "the body is not JSON (application/json)",
    429: "throttled; retry with back-off",
    500: "internal error",
}


def documented_responses(status: int) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses of a route: its success status and the API's error statuses."""
    error: OpenAPIResponse = {
        "description": "",
        "content": {"application/json": {"model": ErrorBody}},
    }
    success: OpenAPIResponse = {"description": "success"}
    if status == HTTPStatus.NO_CONTENT:
        success = {"description": "done; no body", "content": {}}  # not a JSON null
    return {
        status: success,
        **{code: {**error, "description": text} for code, text in ERROR_STATUSES.items()},
    }


class UnauthorizedError(DomainError):
    """No valid identity claims: the request did not come through the authorizer."""

    code, status = "unauthorized", 401


def error_response(status: int, code: str, message: str) -> Response[str]:
    """The API's one error shape; the message is clipped, so no error echoes a large input."""
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps({"code": code, "message": message}),
    )


def no_content() -> Response[None]:
    """A 204: no body, no Content-Type, as HTTP has it (a JSON ``null`` would be a body)."""
    return Response(status_code=204, body=None, content_type=None)


def _domain(error: DomainError) -> Response[str]:
    return error_response(error.status, error.code, str(error))


def _invalid(error: RequestValidationError) -> Response[str]:
    return error_response(400, "validation_error", _describe(error))


def _cursor(error: InvalidCursorError) -> Response[str]:
    return error_response(400, "invalid_cursor", f"{error}; start again without a cursor")


def _throttled(_: Exception) -> Response[str]:
    return error_response(429, "throttled", "the table is busy; retry with back-off")


def _bad_input(error: DynashardError) -> Response[str]:
    return error_response(400, "bad_request", str(error))


def _dynamodb(error: ClientError) -> Response[str]:
    if is_throttling(error):
        return _throttled(error)
    if error_code(error) == "LimitExceededException":  # the engine refuses more work for now
        return error_response(503, "unavailable", "the table refuses writes for now; retry later")
    logger.exception("DynamoDB error")
    return error_response(500, "internal_error", "internal error")


def _unexpected(_: Exception) -> Response[str]:
    logger.exception("unhandled error")
    return error_response(500, "internal_error", "internal error")


def _unsupported(_: Exception) -> Response[str]:
    return error_response(415, "unsupported_media_type", "send the body as application/json")


def _no_route(_: Exception) -> Response[str]:
    return error_response(404, "not_found", "no such route")


ERROR_HANDLERS: list[tuple[type[Exception] | list[type[Exception]], Callable[..., Any]]] = [
    (DomainError, _domain),
    (RequestUnsupportedContentType, _unsupported),
    (RequestValidationError, _invalid),
    (InvalidCursorError, _cursor),
    ([WriteThrottledError, StreamFailedError], _throttled),
    (DynashardError, _bad_input),
    (ClientError, _dynamodb),
    (Exception, _unexpected),
]
"""Powertools picks the handler of the most specific class in the error's MRO."""


def cors_config(env: Mapping[str, str]) -> CORSConfig | None:
    """CORS for the stage's browser origins: every response the handlers send (success or
    error) names the caller's origin when it is allowed; none configured, no CORS headers."""
    origins = allowed_origins(env)
    if not origins:
        return None
    return CORSConfig(
        allow_origin=origins[0],
        extra_origins=origins[1:],
        allow_headers=REQUEST_HEADERS,
        max_age=CORS_MAX_AGE_SECONDS,
    )


class StrictPathResolver(APIGatewayRestResolver):
    """Powertools' REST resolver with routes that must match the whole path: its patterns end
    in ``$``, which in Python also matches before a final newline, so ``/users/<id>%0A`` was
    served as ``/users/<id>`` (and a DELETE with one removed the participant)."""

    @staticmethod
    def _compile_regex(rule: str, base_regex: str = r"^{}/*\Z") -> re.Pattern[str]:
        pattern: re.Pattern[str] = ApiGatewayResolver._compile_regex(rule, base_regex)
        return pattern


def new_resolver(
    extra_handlers: list[tuple[type[Exception], Callable[..., Any]]] | None = None,
) -> APIGatewayRestResolver:
    """A REST API resolver with request/response validation and the API's error mapping."""
    app = StrictPathResolver(
        enable_validation=True, json_body_deserializer=strict_json, cors=cors_config(os.environ)
    )
    for exception, handle in [*ERROR_HANDLERS, *(extra_handlers or [])]:
        app.exception_handler(exception)(handle)
    app.not_found(_no_route)
    app._request_validation_middleware = JsonBodiesOnly()  # Powertools' slot for it
    return app


def caller(app: APIGatewayRestResolver) -> Caller:
    """The caller from the authorizer's claims, never from the request itself; 401 without."""
    authorizer = app.current_event.request_context.authorizer
    claims = authorizer.claims
    account, user = claims.get(ACCOUNT_CLAIM), claims.get(USER_CLAIM)
    if not (isinstance(account, str) and _ACCOUNT_PATTERN.match(account)):
        raise UnauthorizedError("missing or invalid account claim")
    if not (isinstance(user, str) and _USER_PATTERN.match(user)):
        raise UnauthorizedError("missing or invalid user claim")
    return Caller(account_id=account, user_id=user)


def route(app: APIGatewayRestResolver, name: str) -> Callable[[F], F]:
    """Register a function for the route table's entry `name`."""
    entry = ROUTES[name]
    decorator: Callable[[F], F] = app.route(
        resolver_rule(entry),
        entry.method,
        summary=entry.summary,
        operation_id=name,
        tags=[entry.group.value],
        status_code=entry.status,
        responses=documented_responses(entry.status),
    )
    return decorator


PLUS_HINT = " (a + in a query string means a space: write it as %2B, e.g. +01:00 as %2B01:00)"


def _describe(error: RequestValidationError) -> str:
    parts = []
    for problem in error.errors()[:5]:
        location = problem.get("loc", ())
        where = ".".join(str(part)[:MAX_LOCATION_PART] for part in location)
        given = problem.get("input")
        hint = PLUS_HINT if location[:1] == ("query",) and " " in str(given) else ""
        parts.append(f"{where}: {problem.get('msg', 'invalid')}{hint}")
    return "; ".join(parts) or "invalid request"


def _slash_in_path_parameter(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """API Gateway decodes ``%2F`` into a path parameter (``/incidents/by-number/1%2F`` is
    ``number = "1/"``) while the resolver matches the decoded path, where it reads as a
    separator: no parameter of this API holds a ``/``, so it is refused here, naming it."""
    for name, value in (event.get("pathParameters") or {}).items():
        if "/" in str(value):
            body = {"code": "validation_error", "message": f"path.{name}: must not contain '/'"}
            return {
                "statusCode": 400,
                "multiValueHeaders": {"Content-Type": [content_types.APPLICATION_JSON]},
                "body": json.dumps(body),
                "isBase64Encoded": False,
            }
    return None


def lambda_handler(
    app: APIGatewayRestResolver, before: Callable[[LambdaContext], None] | None = None
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """The Lambda entry point of a resolver: correlation id, tracing and metrics around it."""
    browser_origins = bool(allowed_origins(os.environ))

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        if before:
            before(context)
        response = _slash_in_path_parameter(event) or app.resolve(event, context)
        return vary_on_origin(response) if browser_origins else response

    return handler


def vary_on_origin(response: dict[str, Any]) -> dict[str, Any]:
    """``Vary: Origin`` on every response of an API with browser origins: the CORS headers
    depend on the request's Origin, so a shared cache must key on it (Powertools'
    `CORSConfig` names the origin but does not say so). Added to what Vary already lists."""
    multi = response.get("multiValueHeaders")
    if isinstance(multi, dict):
        values = [v for v in multi.get("Vary", []) if v.lower() != "origin"]
        multi["Vary"] = [*values, "Origin"]
        return response
    headers = response.setdefault("headers", {})
    present = [v.strip() for v in str(headers.get("Vary", "")).split(",") if v.strip()]
    headers["Vary"] = ", ".join([*(v for v in present if v.lower() != "origin"), "Origin"])
    return response
