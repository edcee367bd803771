"""Reading insights: a range's aggregates, merged into one row per period.

The read is one Query per shard of the account's (or the team's) aggregates over the
range's days, so it costs what the days and severities hold, whatever the number of
incidents in them; eventually consistent (figures arrive through the stream anyway).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

from dynashard.query import Item
from incidents.errors import InvalidFilterError
from incidents.insights.aggregates import (
    ALL_TEAMS,
    AUTO_RESOLVED,
    RELATIVE_ACCURACY,
    SHARDS,
    UNACKNOWLEDGED,
    Aggregate,
    partition,
    sort_key,
)
from incidents.insights.figures import Measure
from incidents.insights.models import Granularity, IncidentInsight, IncidentInsights
from incidents.models import Severity
from incidents.store import Caller, Store
from incidents.table import PK, SK

DEFAULT_DAYS = 30
"""Days a read without ``from`` covers, ending with ``until``."""
MAX_DAYS = 366
"""Days one read covers at most: a year, so a read's cost has a ceiling."""


@dataclass(frozen=True)
class InsightRequest:
    """A range of days (inclusive), how to split it, and what to keep."""

    start: date
    until: date
    granularity: Granularity = Granularity.DAY
    team_id: str | None = None
    severity: Severity | None = None

    def __post_init__(self) -> None:
        if self.until < self.start:
            raise InvalidFilterError(f"until ({self.until}) is before from ({self.start})")
        if (self.until - self.start).days + 1 > MAX_DAYS:
            raise InvalidFilterError(f"a range covers at most {MAX_DAYS} days")


def incident_insights(store: Store, caller: Caller, request: InsightRequest) -> IncidentInsights:
    """The range's rows, every period present (an empty one has counts of 0)."""
    merged = {start: Aggregate() for start, _ in periods(request)}
    for item in _items(store, caller.account_id, request):
        day = date.fromisoformat(item[SK]["S"].split("#", 1)[0])
        merged[row_start(day, request)].merge_item(item)
    return IncidentInsights.model_validate(
        {
            "from": request.start,
            "until": request.until,
            "granularity": request.granularity,
            "team_id": request.team_id,
            "severity": request.severity,
            "relative_accuracy": RELATIVE_ACCURACY,
            "items": [_row(start, end, merged[start]) for start, end in periods(request)],
        }
    )


def _items(store: Store, account: str, request: InsightRequest) -> Iterator[Item]:
    team = request.team_id or ALL_TEAMS
    low = request.start.isoformat()
    high = sort_key(request.until.isoformat(), "~")
    for shard in range(SHARDS):
        pages = store.client.get_paginator("query").paginate(
            TableName=store.table_name,
            KeyConditionExpression=f"{PK} = :pk AND {SK} BETWEEN :low AND :high",
            ExpressionAttributeValues={
                ":pk": {"S": partition(account, team, shard)},
                ":low": {"S": low},
                ":high": {"S": high},
            },
        )
        for page in pages:
            for item in page.get("Items", []):
                if request.severity is None or item[SK]["S"].endswith(f"#{request.severity}"):
                    yield item


def periods(request: InsightRequest) -> list[tuple[date, date]]:
    """Each period's first day and its last day within the range."""
    found: list[tuple[date, date]] = []
    day = request.start
    while True:
        granularity = request.granularity
        end = min(_period_end(period_start(day, granularity), granularity), request.until)
        found.append((row_start(day, request), end))
        if end >= request.until:
            return found
        day = shifted(end, 1)


def row_start(day: date, request: InsightRequest) -> date:
    """The first day of the row `day` is counted in (a first period starts with the range)."""
    return max(period_start(day, request.granularity), request.start)


def period_start(day: date, granularity: Granularity) -> date:
    """The first day of the period `day` is in."""
    if granularity is Granularity.WEEK:
        return shifted(day, -day.weekday())
    if granularity is Granularity.MONTH:
        return day.replace(day=1)
    return day


def _period_end(start: date, granularity: Granularity) -> date:
    if granularity is Granularity.WEEK:
        return shifted(start, 6)
    if granularity is Granularity.MONTH:
        return start.replace(day=calendar.monthrange(start.year, start.month)[1])
    return start


def shifted(day: date, days: int) -> date:
    """`day` moved by `days`, held within the calendar Python knows (years 1 to 9999)."""
    ordinal = day.toordinal() + days
    return date.fromordinal(min(max(ordinal, date.min.toordinal()), date.max.toordinal()))


def _row(start: date, end: date, merged: Aggregate) -> IncidentInsight:
    ack, resolve = Measure.ACKNOWLEDGED, Measure.RESOLVED
    return IncidentInsight(
        range_start=start,
        range_end=end,
        total_incident_count=merged.count(Measure.OPENED),
        total_incidents_acknowledged=merged.count(ack),
        total_incidents_resolved=merged.count(resolve),
        total_incidents_resolved_unacknowledged=merged.counts[UNACKNOWLEDGED],
        total_incidents_auto_resolved=merged.counts[AUTO_RESOLVED],
        total_incidents_reopened=merged.count(Measure.REOPENED),
        mean_seconds_to_first_ack=merged.mean(ack),
        p50_seconds_to_first_ack=merged.quantile(ack, 0.5),
        p90_seconds_to_first_ack=merged.quantile(ack, 0.9),
        p99_seconds_to_first_ack=merged.quantile(ack, 0.99),
        mean_seconds_to_resolve=merged.mean(resolve),
        p50_seconds_to_resolve=merged.quantile(resolve, 0.5),
        p90_seconds_to_resolve=merged.quantile(resolve, 0.9),
        p99_seconds_to_resolve=merged.quantile(resolve, 0.99),
    )
