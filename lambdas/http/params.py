"""Query parameters every list takes (page size, cursor, order, instants), declared once so
that each handler group reads them alike and none imports another for them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import BeforeValidator

from incidents.errors import InvalidFilterError
from incidents.models import RFC3339, parse_timestamp
from incidents.paging import MAX_LIMIT


def _decimal_integer(value: object) -> object:
    """Only a plain decimal integer (``25``), not what Python's int() also takes from a
    query string (``1.0``, ``5_0``, ``+5``, `` 5``)."""
    if isinstance(value, str) and not re.fullmatch(r"[0-9]+", value):
        raise ValueError("must be a whole number written in decimal digits only")
    return value


Limit = Annotated[
    Annotated[int, BeforeValidator(_decimal_integer)],
    Query(ge=1, le=MAX_LIMIT, description="page size", examples=[25]),
]
Cursor = Annotated[
    str | None,
    Query(description="next_cursor of the last page, exactly as it was returned"),
]
Order = Literal["asc", "desc"]


def instant_query(when: str, example: str) -> Any:
    """A `since` / `until` parameter: an RFC 3339 instant, documented as a date-time."""
    return Query(
        pattern=RFC3339,
        description=f"only {when} this instant (RFC 3339, with offset)",
        examples=[example],
        json_schema_extra={"format": "date-time"},
    )


def parse_instant(text: str | None, name: str) -> datetime | None:
    """An RFC 3339 instant (its pattern already checked) as an aware datetime in UTC; a date
    that does not exist (month 13, February 30, offset 24:00) is a 400 naming `name`.

    An instant that Python cannot hold in UTC (``0001-01-01T00:00:00+01:00`` is in year 0,
    ``9999-12-31T23:59:59-01:00`` in year 10000) lies before or after every incident: it is
    clamped to the first or last instant, which answers the same list."""
    if text is None:
        return None
    try:
        moment = parse_timestamp(text)
    except ValueError:
        raise InvalidFilterError(f"{name}: {text!r} is not a date and time") from None
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        east = (moment.utcoffset() or timedelta(0)) > timedelta(0)
        return (datetime.min if east else datetime.max).replace(tzinfo=UTC)
