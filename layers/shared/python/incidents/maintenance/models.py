"""What a maintenance window is, as the API takes and shows it: PagerDuty's fields (a start,
an end, a description), on one team or one integration, with incident.io's
``resolve_on_end``."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, StrictBool, model_validator

from incidents.alerts.models import AlertSeverity, EventAction, SuppressedStatus
from incidents.heartbeats.models import IntegrationId
from incidents.models import KSUID, RESPONSE, Instant, Page, TeamId, Timestamp
from incidents.requests import CleanTitle, never_null

WINDOW_ID = rf"^mw_{KSUID}$"
MAX_LENGTH = timedelta(days=90)
"""A window lasts at most this long: longer is a service switched off, not maintenance."""


class WindowStatus(StrEnum):
    """Where a window stands, by the clock."""

    SCHEDULED = "scheduled"
    """Not started: it can be deleted."""
    ONGOING = "ongoing"
    """Its team's or integration's alerts are suppressed; it can be ended early."""
    ENDED = "ended"


def status_at(start_time: str, end_time: str, now: str) -> WindowStatus:
    """A window's status at `now` (timestamps as `incidents.models.timestamp` writes them)."""
    if now < start_time:
        return WindowStatus.SCHEDULED
    return WindowStatus.ONGOING if now < end_time else WindowStatus.ENDED


class NewMaintenanceWindow(BaseModel):
    """A maintenance window on one team (every integration routed to it) or one integration
    (send exactly one of `team_id` and `integration_id`): from `start_time` to `end_time`
    their alerts open and move nothing, and are kept as suppressed. A start in the past is
    now; the end must be in the future, at most 90 days after the start."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra=never_null("team_id", "integration_id")
    )

    team_id: TeamId | None = None
    integration_id: IntegrationId | None = None
    start_time: Instant
    end_time: Instant
    description: CleanTitle | None = None
    """Optional, as PagerDuty's is."""
    resolve_on_end: StrictBool = False
    """At its end, its suppressed alerts still triggered are resolved (incident.io's); they
    never open an incident either way."""

    @model_validator(mode="after")
    def _checked(self) -> Self:
        for name in ("team_id", "integration_id"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name}: leave it out rather than null")
        if (self.team_id is None) == (self.integration_id is None):
            raise ValueError("name exactly one of team_id and integration_id")
        if self.end_time <= self.start_time:
            raise ValueError("end_time must be after start_time")
        return self


class MaintenanceWindow(BaseModel):
    """A maintenance window as the API shows it."""

    model_config = RESPONSE

    id: str
    team_id: str | None
    integration_id: str | None
    start_time: Timestamp
    end_time: Timestamp
    """When it ends, or when it was ended early."""
    description: str | None
    resolve_on_end: bool
    status: WindowStatus
    ended_early: bool
    suppressed_alerts: int
    """Alerts it suppressed (a retried alert once)."""
    created_at: Timestamp


class MaintenanceWindowList(Page[MaintenanceWindow]):
    """One page of the account's windows, newest first; pass `next_cursor` back for the next."""


class SuppressedAlert(BaseModel):
    """What a window kept of one alert key of one integration."""

    model_config = RESPONSE

    dedup_key: str
    integration_id: str
    summary: str | None
    """The last trigger's (null when the window had only acknowledges or resolves of it)."""
    severity: AlertSeverity | None
    last_action: EventAction
    status: SuppressedStatus
    resolved_at_end: bool
    """Resolved by its window's end (``resolve_on_end``), not by a resolve."""
    count: int
    """Alerts of this key the window suppressed."""
    first_seen_at: Timestamp
    last_seen_at: Timestamp


class SuppressedAlertList(Page[SuppressedAlert]):
    """One page of a window's suppressed alerts, by integration and dedup key."""
