"""Incident lists over HTTP: mine, my teams', one team's, the account's; newest or oldest
first."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from dynashard.query import PageBudget
from incidents.alerts.changes import list_changes as list_account_changes
from incidents.alerts.models import ChangeList
from incidents.errors import ForbiddenError, InvalidFilterError
from incidents.incident import queries
from incidents.incident.queries import IncidentPage
from incidents.insights import queries as insights
from incidents.insights.models import Granularity, IncidentInsights
from incidents.insights.queries import DEFAULT_DAYS, InsightRequest, shifted
from incidents.models import (
    INCIDENT_ID,
    TEAM_ID,
    EventFeed,
    EventList,
    EventType,
    IncidentList,
    Severity,
    State,
    Status,
    TeamId,
)
from incidents.paging import DEFAULT_LIMIT, CreatedWindow, IncidentFilter, PageRequest
from incidents.requests import MAX_LIST
from incidents.timeline import log_entries
from incidents.timeline import queries as timelines
from incidents.timeline.log_entries import LogEntryList
from incidents.timeline.queries import AccountEventPage, EventPage, EventRequest
from lambdas.http.admission import caller, lacks
from lambdas.http.api import answer, lambda_handler, new_resolver, route
from lambdas.http.conditional import if_none_match as if_none_match_header
from lambdas.http.conditional import unless_current
from lambdas.http.params import Cursor, Limit, Order, instant_query, parse_instant
from lambdas.runtime import report_page, store

StateParam = Annotated[State, Query(description="OPEN or CLOSED", examples=["OPEN"])]


OrderParam = Annotated[
    Order,
    Query(
        description="desc: newest first (the default); asc: oldest first. A cursor is "
        "valid only with the order it was made with: send the same order beside it "
        "(another is 400 invalid_cursor)",
        examples=["asc"],
    ),
]


Since = Annotated[
    str | None, instant_query("incidents created at or after", "2026-11-01T00:00:00Z")
]
Until = Annotated[
    str | None, instant_query("incidents created before", "2026-11-23T00:00:00+01:00")
]


StatusParam = Annotated[
    list[Status] | None,
    Query(
        description="only these statuses (repeat the parameter); each must be in the state",
        examples=[["TRIGGERED"]],
    ),
]
SeverityParam = Annotated[
    list[Severity] | None,
    Query(description="only these severities (repeat the parameter)", examples=[["SEV1"]]),
]

app = new_resolver()
PAGE_SECONDS = 3.0
"""A list page's time: a third of the 10 s timeout, and what a person waits for at most."""
RESPONSE_SECONDS = 1.0
"""Kept from the function's remaining time for the response (serialization, metrics)."""
PAGE_READ_UNITS = 200.0
"""A list page's reads: the bench's heaviest page (a first page over 256 streams) reads
153; a page that needs more returns what it has proved, and the next goes on."""


@dataclass(frozen=True)
class ListParams:
    """The query parameters every list takes besides its own."""

    limit: int
    cursor: str | None
    order: Order
    since: str | None
    until: str | None
    status: list[Status] | None
    severity: list[Severity] | None


def _page_request(params: ListParams) -> PageRequest:
    """The page the caller asked for, bounded in time by the invocation's remaining time."""
    remaining = app.lambda_context.get_remaining_time_in_millis() / 1000 - RESPONSE_SECONDS
    seconds = max(0.0, min(PAGE_SECONDS, remaining))
    return PageRequest(
        params.limit,
        params.cursor,
        PageBudget.within(seconds, PAGE_READ_UNITS),
        descending=params.order == "desc",
        window=CreatedWindow(
            parse_instant(params.since, "since"), parse_instant(params.until, "until")
        ),
        filter=IncidentFilter(tuple(params.status or ()), tuple(params.severity or ())),
    )


@route(app, "my_incidents")
def my_incidents(
    *,
    state: StateParam = State.OPEN,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
    order: OrderParam = "desc",
    since: Since = None,
    until: Until = None,
    status: StatusParam = None,
    severity: SeverityParam = None,
) -> IncidentList:
    """Incidents I participate in."""
    page = _page_request(ListParams(limit, cursor, order, since, until, status, severity))
    return _list("my_incidents", queries.my_incidents(store(), caller(), state, page))


@route(app, "my_teams_incidents")
def my_teams_incidents(
    *,
    state: StateParam = State.OPEN,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
    team: Annotated[
        list[TeamId] | None,
        Query(max_length=MAX_LIST, description="only these of my teams (repeat the parameter)"),
    ] = None,
    order: OrderParam = "desc",
    since: Since = None,
    until: Until = None,
    status: StatusParam = None,
    severity: SeverityParam = None,
) -> IncidentList:
    """Incidents of my teams (or of the ones named), each incident once."""
    page = _page_request(ListParams(limit, cursor, order, since, until, status, severity))
    return _list(
        "my_teams_incidents",
        queries.my_teams_incidents(store(), caller(), state, page, team_ids=team),
    )


@route(app, "team_incidents")
def team_incidents(
    *,
    team_id: Annotated[str, Path(pattern=TEAM_ID)],
    state: StateParam = State.OPEN,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
    order: OrderParam = "desc",
    since: Since = None,
    until: Until = None,
    status: StatusParam = None,
    severity: SeverityParam = None,
) -> IncidentList:
    """One team's incidents (members only)."""
    page = _page_request(ListParams(limit, cursor, order, since, until, status, severity))
    return _list("team_incidents", queries.team_incidents(store(), caller(), team_id, state, page))


@route(app, "account_incidents")
def account_incidents(
    *,
    state: StateParam = State.OPEN,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
    order: OrderParam = "desc",
    since: Since = None,
    until: Until = None,
    status: StatusParam = None,
    severity: SeverityParam = None,
) -> IncidentList:
    """Every incident of my account."""
    page = _page_request(ListParams(limit, cursor, order, since, until, status, severity))
    return _list("account_incidents", queries.account_incidents(store(), caller(), state, page))


EventsSince = Annotated[str | None, instant_query("events at or after", "2026-11-01T00:00:00Z")]
EventsUntil = Annotated[str | None, instant_query("events before", "2026-11-23T00:00:00+01:00")]
EventTypeParam = Annotated[
    list[EventType] | None,
    Query(
        description="only these event types (repeat the parameter)",
        examples=[["note.added"]],
    ),
]


@route(app, "incident_timeline")
def incident_timeline(
    *,
    incident_id: Annotated[str, Path(pattern=INCIDENT_ID)],
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
    order: Annotated[
        Order,
        Query(
            description="asc: oldest first (the default: a timeline is read as a story, "
            "event 1 first); desc: newest first. A cursor is valid only with the order it was "
            "made with: send the same order beside it (another is 400 invalid_cursor)",
            examples=["desc"],
        ),
    ] = "asc",
    type: EventTypeParam = None,
    if_none_match: Annotated[
        str | None,
        if_none_match_header(
            "the ETag of a first page you hold: 304, no body, while no event was "
            "added to the incident (ignored with a cursor)"
        ),
    ] = None,
) -> Response[EventList]:
    """Every change to the incident, in the order they committed (by ``seq``); a first
    page's ETag names the incident's event counter (If-None-Match: 304, one read)."""
    params = ListParams(limit, cursor, order, None, None, None, None)
    request = EventRequest(_page_request(params), tuple(type or ()))
    who = caller()
    counted = None if cursor else timelines.event_counter(store(), who, incident_id)
    tag = None if counted is None else str(counted.seq)
    unless_current(tag, if_none_match)
    page = timelines.incident_timeline(store(), who, incident_id, request, counted)
    return answer(app, _events("incident_timeline", page), etag=tag)


@route(app, "incident_log_entries")
def incident_log_entries(
    *,
    incident_id: Annotated[str, Path(pattern=INCIDENT_ID)],
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
    order: Annotated[
        Order,
        Query(
            description="asc: oldest first (the default); desc: newest first. A cursor is "
            "valid only with the order it was made with",
            examples=["desc"],
        ),
    ] = "asc",
) -> LogEntryList:
    """The incident's log in PagerDuty's entries: triggered, acknowledged, resolved, notes,
    who each level paged and each notification sent or failed, in the timeline's order."""
    params = ListParams(limit, cursor, order, None, None, None, None)
    request = EventRequest(_page_request(params))
    return log_entries.incident_log_entries(store(), caller(), incident_id, request)


@route(app, "account_events")
def account_events(
    *,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
    order: Annotated[
        Order,
        Query(
            description="desc: newest first (the default), every committed event; asc: oldest "
            "first, the polling order, up to the settled horizon (events of the last 15 s "
            "wait: an event may still commit that long after its time). A cursor is valid "
            "only with the order it was made with: send the same order beside it (another "
            "is 400 invalid_cursor)",
            examples=["asc"],
        ),
    ] = "desc",
    since: EventsSince = None,
    until: EventsUntil = None,
    type: EventTypeParam = None,
    if_none_match: Annotated[
        str | None,
        if_none_match_header(
            "the ETag of a first page you hold: 304, no body, while the page "
            "would list the same events (it is still read: this spares the transfer, not "
            "the read; ignored with a cursor)"
        ),
    ] = None,
) -> Response[EventFeed]:
    """Every event of my account's incidents, by time: the polling alternative to webhooks.
    Poll oldest first from the last walk's ``next_since``: nothing missed, nothing twice."""
    params = ListParams(limit, cursor, order, since, until, None, None)
    request = EventRequest(_page_request(params), _readable(type))
    who, tables = caller(), store()
    if order == "asc":
        settled = timelines.settled_events(tables, who, request, tables.clock())
        page, next_since = settled.page, settled.next_since
    else:
        page, next_since = timelines.account_events(tables, who, request), None
    report_page("account_events", page.stats)
    tag = None if cursor else page_tag(page)
    unless_current(tag, if_none_match)
    feed = EventFeed(
        items=page.items,
        next_cursor=page.next_cursor,
        has_more=page.has_more,
        next_since=next_since,
    )
    return answer(app, feed, etag=tag)


INCIDENT_EVENTS = tuple(kind for kind in EventType if kind is not EventType.SCHEDULE_HANDOFF)


def _readable(types: list[EventType] | None) -> tuple[EventType, ...]:
    """The types asked for, as the caller may read them: an API key without
    ``schedules:read`` reads no handoff (403 if it names them; left out of every type)."""
    if not lacks("schedules:read"):
        return tuple(types or ())
    if types and EventType.SCHEDULE_HANDOFF in types:
        raise ForbiddenError("this API key lacks the scope schedules:read (schedule.handoff)")
    return tuple(types or INCIDENT_EVENTS)


def page_tag(page: AccountEventPage) -> str:
    """A first page's ETag: a digest of the events it lists and whether more follow."""
    listed = "\x1f".join([*(event.id for event in page.items), str(page.has_more)])
    return hashlib.sha256(listed.encode()).hexdigest()[:24]


def _events(name: str, page: EventPage) -> EventList:
    report_page(name, page.stats)
    return EventList(items=page.items, next_cursor=page.next_cursor, has_more=page.has_more)


@route(app, "list_changes")
def list_changes(
    *,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
    order: OrderParam = "desc",
    since: Annotated[
        str | None, instant_query("changes at or after", "2026-11-20T00:00:00Z")
    ] = None,
    until: Annotated[str | None, instant_query("changes before", "2026-11-27T00:00:00Z")] = None,
) -> ChangeList:
    """What changed in the account's systems (change events from its integrations), newest
    first: by default the last 7 days, at most 31 a read."""
    page = _page_request(ListParams(limit, cursor, order, since, until, None, None))
    changes = list_account_changes(store(), caller(), page)
    report_page("list_changes", changes.stats)
    return ChangeList(
        items=changes.items, next_cursor=changes.next_cursor, has_more=changes.has_more
    )


DAY = r"^\d{4}-\d{2}-\d{2}$"


def _day_query(what: str, example: str, alias: str | None = None) -> Any:
    """A day of the insights' range (UTC, ``YYYY-MM-DD``)."""
    return Query(
        alias=alias,
        pattern=DAY,
        description=f"{what} (a UTC day, YYYY-MM-DD)",
        examples=[example],
        json_schema_extra={"format": "date"},
    )


@route(app, "incident_insights")
def incident_insights(
    *,
    from_: Annotated[
        str | None, _day_query("the first day; default: 29 days before until", "2026-11-01", "from")
    ] = None,
    until: Annotated[str | None, _day_query("the last day; default: today", "2026-11-30")] = None,
    granularity: Annotated[
        Granularity, Query(description="rows per day, ISO week or calendar month")
    ] = Granularity.DAY,
    team: Annotated[
        str | None, Query(pattern=TEAM_ID, description="one team's incidents; default: all")
    ] = None,
    severity: Annotated[Severity | None, Query(description="one severity; default: all")] = None,
) -> IncidentInsights:
    """Incidents opened, and time to first acknowledge and to resolve (mean, p50, p90, p99)
    per period, by the day each incident was created (docs: Insights)."""
    last = _day(until) if until else store().clock().date()
    first = _day(from_) if from_ else shifted(last, 1 - DEFAULT_DAYS)
    request = InsightRequest(first, last, granularity, team, severity)
    return insights.incident_insights(store(), caller(), request)


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidFilterError(f"{value} is not a day of the calendar") from None


def _list(name: str, page: IncidentPage) -> IncidentList:
    report_page(name, page.stats)
    return IncidentList(items=page.items, next_cursor=page.next_cursor, has_more=page.has_more)


handler = lambda_handler(app)
