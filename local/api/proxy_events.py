"""API Gateway REST proxy events, exactly as the deployed API sends them to a Lambda.

The tests and the local gateway (`make dev`) build every request through here, so the
handlers never see a shape the cloud would not send. The shape is checked against
Powertools' own model of the event in the tests.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from lambdas.routes import ROUTES, Route

LOCAL_API_ID = "local"
LOCAL_STAGE = "local"


_PATTERNS = [
    (name, route, re.compile(re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", route.path)))
    for name, route in ROUTES.items()
]
"""Each route's path as a regular expression, compiled once."""


def match_route(method: str, path: str) -> tuple[str, Route, dict[str, str]] | None:
    """The route table's entry for ``method path``, with its path parameters."""
    for name, route, pattern in _PATTERNS:
        found = pattern.fullmatch(path) if route.method == method.upper() else None
        if found:
            return name, route, found.groupdict()
    return None


def proxy_event(
    route: Route,
    path_parameters: Mapping[str, str] | None = None,
    *,
    query: Mapping[str, Sequence[str]] | None = None,
    headers: Mapping[str, str] | None = None,
    body: str | None = None,
    authorizer: Mapping[str, str] | None = None,
    stage: str | None = None,
) -> dict[str, Any]:
    """The REST proxy event of one request; `authorizer`, the context the API's authorizer
    adds (`lambdas.http.principal.context_of`);
    `stage`, the first segment of an execute-api URL (none locally or on a custom domain)."""
    parameters = dict(path_parameters or {})
    path = route.path.format(**parameters)
    multi = {name: list(values) for name, values in (query or {}).items() if values}
    now = datetime.now(UTC)
    request_id = str(uuid.uuid4())
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return {
        "resource": route.path,
        "path": path,
        "httpMethod": route.method,
        "headers": all_headers,
        "multiValueHeaders": {name: [value] for name, value in all_headers.items()},
        "queryStringParameters": {n: v[-1] for n, v in multi.items()} or None,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": parameters or None,
        "stageVariables": None,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": LOCAL_API_ID,
            "authorizer": dict(authorizer or {}),
            "domainName": "127.0.0.1",
            "extendedRequestId": request_id,
            "httpMethod": route.method,
            "identity": {"sourceIp": "127.0.0.1", "userAgent": "local"},
            "path": f"/{stage}{path}" if stage else path,  # what the client called
            "protocol": "HTTP/1.1",
            "requestId": request_id,
            "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "requestTimeEpoch": int(now.timestamp() * 1000),
            "resourceId": "local",
            "resourcePath": route.path,
            "stage": LOCAL_STAGE,
        },
        "body": body,
        "isBase64Encoded": False,
    }


def json_body(value: Any) -> str:
    """A request body as the client would send it."""
    return json.dumps(value)


@dataclass
class LocalLambdaContext:
    """The attributes of a Lambda context that Powertools and the handlers read; the
    remaining time counts down from the invocation's start, as Lambda's does."""

    function_name: str = "incidents-local"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:incidents-local"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    timeout_seconds: float = 10.0
    """The function's timeout (the API's functions: 10 s)."""
    started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds until the function's timeout, never below 0."""
        left = self.started + self.timeout_seconds - time.monotonic()
        return max(0, int(left * 1000))

    def overran(self) -> bool:
        """Whether the invocation ran past its timeout (Lambda would have ended it)."""
        return self.get_remaining_time_in_millis() == 0
