"""Request bodies as JSON (RFC 8259) and nothing more, checked before any handler sees them.

Python's ``json`` accepts ``NaN``, ``Infinity`` and numbers beyond float range (``1e999``
becomes ``inf``), which DynamoDB cannot store, and strings with lone surrogates, which no
UTF-8 encoder writes; nesting deeper than DynamoDB's 32 levels could never be stored either.
Each is a 400 naming where it is, from the one deserializer every resolver uses.
"""

from __future__ import annotations

import json
import math
from typing import Any

from aws_lambda_powertools.event_handler.middlewares.openapi_validation import (
    OpenAPIRequestValidationMiddleware,
)
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)

from incidents.errors import DomainError

MAX_DEPTH = 32
"""DynamoDB's limit on nested attributes."""


class InvalidJsonError(DomainError):
    """A body that is not JSON a DynamoDB item can hold."""

    code = "invalid_json"


def strict_json(text: str | bytes) -> Any:
    """Parse a request body, refusing what JSON or DynamoDB does not allow (400)."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise InvalidJsonError(f"the body is nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as error:
        raise InvalidJsonError(
            f"the body is not JSON: {error.msg} at character {error.pos}"
        ) from None
    except ValueError as error:  # integers beyond Python's digit limit
        raise InvalidJsonError(f"the body is not JSON a table can hold: {error}") from None
    _check(value, "body", 0)
    return value


def _no_constant(name: str) -> float:
    raise InvalidJsonError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise InvalidJsonError(f"the number {text[:20]} is out of range")
    return number


def _check(value: Any, where: str, depth: int) -> None:
    """Every string valid Unicode, nesting within `MAX_DEPTH`."""
    if depth > MAX_DEPTH:
        raise InvalidJsonError(f"{where} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value, where)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, f"{where} (a key)")
            _check(item, f"{where}.{key[:40]}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check(item, f"{where}[{index}]", depth + 1)


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidJsonError(f"{where} holds a lone surrogate (not valid Unicode)") from None


class JsonBodiesOnly(OpenAPIRequestValidationMiddleware):
    """Powertools' request validation, parsing JSON bodies only: any other media type is a
    415 before a parser runs (Powertools would also parse forms and multipart, and fail with
    a 500 on a multipart type without a boundary). A query parameter the operation does not
    take is a 400 naming it, on every route alike (``since`` on a timeline was ignored)."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # Powertools' is not annotated

    def handler(self, app: Any, next_middleware: Any) -> Any:
        """Unknown query parameters refused, then Powertools' validation."""
        route = app.context.get("_route")
        if route is not None:
            _known_parameters_only(app.current_event, route)
        return super().handler(app, next_middleware)

    def _get_body(self, app: Any) -> dict[str, Any]:
        """A JSON body (media types are case-insensitive; a charset, if named, must be
        UTF-8, the only one JSON allows between systems: RFC 8259, section 8.1)."""
        content_type = app.current_event.headers.get("content-type") or ""
        media_type, *parameters = (part.strip() for part in content_type.split(";"))
        media_type = media_type.lower()
        if media_type and media_type != "application/json":
            raise _unsupported(f"Unsupported content type: {media_type[:60]}")
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            charset = value.strip().strip('"').lower()
            if name.strip().lower() == "charset" and charset not in ("utf-8", "utf8"):
                raise _unsupported(f"Unsupported charset: {charset[:30]} (JSON is UTF-8)")
        body: dict[str, Any] = self._parse_json_data(app)
        return body


def _unsupported(message: str) -> RequestUnsupportedContentType:
    return RequestUnsupportedContentType(
        "Unsupported content type",
        errors=[
            {
                "type": "unsupported_content_type",
                "loc": ("body",),
                "msg": message,
                "input": {},
                "ctx": {},
            }
        ],
    )


def _known_parameters_only(event: Any, route: Any) -> None:
    """`RequestValidationError` naming each query parameter `route` does not declare."""
    taken = sorted(field.alias for field in route.dependant.query_params)
    given = event.multi_value_query_string_parameters or {}
    unknown = [name for name in given if name not in taken]
    if unknown:
        takes = f"it takes {', '.join(taken)}" if taken else "it takes none"
        raise RequestValidationError(
            [
                {
                    "type": "unknown_parameter",
                    "loc": ("query", name[:40]),
                    "msg": f"not a parameter of this operation ({takes})",
                    "input": None,
                }
                for name in unknown
            ]
        )
