"""API Gateway proxy responses the handler builds itself, before or around the resolver,
in the API's one error shape."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.event_handler import content_types

from lambdas.http.responses import RETRY_AFTER_SECONDS, ErrorCode

MAX_MESSAGE = 300
"""Characters of an error message at most: enough to say what is wrong, never a payload."""


def clipped(message: str) -> str:
    """`message`, cut to `MAX_MESSAGE` characters, so no error echoes a large input."""
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


def error_headers(status: int, headers: Mapping[str, str] | None = None) -> dict[str, str]:
    """`headers`, with ``Retry-After`` on a throttled or unavailable answer that lacks one."""
    given = dict(headers or {})
    retry = RETRY_AFTER_SECONDS.get(status)
    if retry and "Retry-After" not in given:
        given["Retry-After"] = str(retry)
    return given


def proxy_error(
    status: int, code: ErrorCode | str, message: str, headers: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A proxy response with the error body ``{"code", "message"}``."""
    multi = {"Content-Type": [content_types.APPLICATION_JSON]}
    multi.update({name: [value] for name, value in error_headers(status, headers).items()})
    return {
        "statusCode": status,
        "multiValueHeaders": multi,
        "body": json.dumps({"code": ErrorCode(code).value, "message": clipped(message)}),
        "isBase64Encoded": False,
    }


def add_headers(response: dict[str, Any], headers: Mapping[str, str]) -> None:
    """`headers` on a proxy response, beside its own (a header it has already is kept)."""
    multi = response.get("multiValueHeaders")
    if isinstance(multi, dict):
        for name, value in headers.items():
            multi.setdefault(name, [value])
    else:
        single = response.setdefault("headers", {})
        for name, value in headers.items():
            single.setdefault(name, value)
