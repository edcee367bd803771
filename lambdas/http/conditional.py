"""Conditional requests in one place: ``If-None-Match`` (a 304 while the client's copy is
current) and ``If-Match`` (an incident's version, else 400 ``invalid_if_match``), as RFC
9110 reads them."""

from __future__ import annotations

import re
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Header

from incidents.errors import DomainError

ENTITY_TAG = re.compile(r'\s*(?:W/)?"([^"]*)"\s*(?:,|$)')
IF_MATCH = r'^((W/)?"[0-9]{1,20}(\.[0-9]{1,20})?"|[0-9]{1,20})$'
"""What `if_match_version` accepts, documented (checked there, to answer 400
invalid_if_match): a version, or an ETag as GET answers it (version and event counter; the
version compares)."""
IfMatch = Annotated[
    str | None,
    Header(
        alias="If-Match",
        max_length=32,
        description='the version to update: 3, "3" or W/"3" (else 400 invalid_if_match)',
        json_schema_extra={"pattern": IF_MATCH},
    ),
]


class NotModifiedError(Exception):
    """The client's copy is current (``If-None-Match``): a 304 with the tag, no body."""

    def __init__(self, etag: str) -> None:
        super().__init__(etag)
        self.etag = etag


class InvalidIfMatchError(DomainError):
    """An If-Match header that is not a version number."""

    code = "invalid_if_match"


def not_modified(error: NotModifiedError) -> Response[None]:
    """The 304 of `error`: its tag, no body, no Content-Type."""
    return Response(
        status_code=304, body=None, content_type=None, headers={"ETag": f'"{error.etag}"'}
    )


def if_none_match(description: str) -> Any:
    """The ``If-None-Match`` header of a route, with what a 304 means there."""
    return Header(alias="If-None-Match", max_length=1024, description=description)


def entity_tags(header: str | None) -> set[str]:
    """The tags an ``If-None-Match`` names, unquoted (weak ones compare equal, as RFC 9110
    has it for this header); ``*`` is returned as is. Anything unparsable names none."""
    text = (header or "").strip()
    if text == "*":
        return {"*"}
    return {match.group(1) for match in ENTITY_TAG.finditer(text)}


def unless_current(tag: str | None, header: str | None) -> None:
    """Raise `NotModifiedError` when the client's ``If-None-Match`` names `tag`."""
    if tag is not None and tag in entity_tags(header):
        raise NotModifiedError(tag)


def if_match_version(header: str | None) -> int | None:
    """``If-Match`` as a version: ``3``, ``"3"`` and ``W/"3"`` (at most 20 digits, quotes
    in pairs) are accepted; anything else is a 400, never a 412."""
    if header is None:
        return None
    text = header.strip()
    if not re.fullmatch(IF_MATCH, text):
        raise InvalidIfMatchError(
            f'If-Match must be an incident version (3, "3" or W/"3"), got {text[:40]!r}'
        )
    return int(text.removeprefix("W/").strip('"').partition(".")[0])
