"""What ``GET /insights/incidents`` answers: PagerDuty's analytics field names where they
fit, one row per day, week or month of the range."""

from __future__ import annotations

from datetime import date
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from incidents.models import RESPONSE, Severity


class Granularity(StrEnum):
    """How rows split the range: UTC days, ISO weeks (from Monday) or calendar months."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"


Seconds = float | None


class IncidentInsight(BaseModel):
    """One period's incidents: what was opened on its days, and how fast it was handled."""

    model_config = RESPONSE

    range_start: date = Field(description="the period's first day (UTC)")
    range_end: date = Field(description="its last day within the range asked (inclusive)")
    total_incident_count: int = Field(description="incidents opened")
    total_incidents_acknowledged: int = Field(description="of them, acknowledged at least once")
    total_incidents_resolved: int = Field(description="resolved at least once")
    total_incidents_resolved_unacknowledged: int = Field(
        description="resolved without ever being acknowledged"
    )
    total_incidents_auto_resolved: int = Field(
        description="first resolved by their integration's auto_resolve_timeout"
    )
    total_incidents_reopened: int = Field(description="reopened after a resolve")
    mean_seconds_to_first_ack: Seconds = Field(
        description="exact mean from creation to the first acknowledge; null: none"
    )
    p50_seconds_to_first_ack: Seconds
    p90_seconds_to_first_ack: Seconds
    p99_seconds_to_first_ack: Seconds
    mean_seconds_to_resolve: Seconds = Field(
        description="exact mean from creation to the first resolve; null: none"
    )
    p50_seconds_to_resolve: Seconds
    p90_seconds_to_resolve: Seconds
    p99_seconds_to_resolve: Seconds


class IncidentInsights(BaseModel):
    """Incident figures over a range of days, for the account or one team, one severity or
    all; quantiles are within `relative_accuracy` of the exact ones."""

    model_config = ConfigDict(**RESPONSE, populate_by_name=True)

    from_: date = Field(alias="from", description="the range's first day (UTC)")
    until: date = Field(description="its last day (UTC, inclusive)")
    granularity: Granularity
    team_id: str | None = Field(description="the team asked for; null: the whole account")
    severity: Severity | None = Field(description="the severity asked for; null: all")
    relative_accuracy: float = Field(
        description="a pNN value is within this fraction of the exact quantile (DDSketch)"
    )
    items: list[IncidentInsight]
