"""The urgency of the incidents an integration opens, with PagerDuty's names: constant
(``high`` or ``low``), or one urgency during its support hours and another outside them,
read on the support hours' wall clock. The urgency is the incident's for its whole
escalation: it decides which of each person's notification rules apply."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from incidents.contacts.models import Urgency
from incidents.errors import DomainError
from incidents.models import TimeZoneName
from incidents.time_zones import zone


class ConstantUrgency(BaseModel):
    """One urgency, whenever the alert comes."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["constant"]
    urgency: Urgency


class SupportHoursUrgency(BaseModel):
    """One urgency during the integration's support hours, another outside them."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["use_support_hours"]
    during_support_hours: ConstantUrgency
    outside_support_hours: ConstantUrgency


UrgencyRule = Annotated[ConstantUrgency | SupportHoursUrgency, Field(discriminator="type")]
"""PagerDuty's ``incident_urgency_rule``."""
ALWAYS_HIGH = ConstantUrgency(type="constant", urgency=Urgency.HIGH)


WallTime = Annotated[str, Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$")]
"""A time of day on the support hours' wall clock, ``HH:MM:SS`` (no offset: the time zone
says it)."""


def _days(days: list[int]) -> list[int]:
    if len(set(days)) != len(days):
        raise ValueError("days_of_week: each day once")
    return sorted(days)


class SupportHours(BaseModel):
    """The same hours on some days of the week (ISO: 1 is Monday), on a time zone's wall
    clock (PagerDuty's ``fixed_time_per_day``)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["fixed_time_per_day"] = "fixed_time_per_day"
    time_zone: TimeZoneName
    days_of_week: Annotated[
        list[Annotated[int, Field(ge=1, le=7)]],
        Field(min_length=1, max_length=7, json_schema_extra={"uniqueItems": True}),
        AfterValidator(_days),
    ]
    start_time: WallTime
    end_time: WallTime

    @model_validator(mode="after")
    def _ordered(self) -> SupportHours:
        if self.end_time <= self.start_time:
            raise ValueError("end_time: after start_time (support hours end on their day)")
        return self

    def holds(self, moment: datetime) -> bool:
        """Whether `moment` is within them."""
        local = moment.astimezone(zone(self.time_zone))
        within = self.start_time <= f"{local:%H:%M:%S}" < self.end_time  # fixed width: sorts
        return local.isoweekday() in self.days_of_week and within


def urgency_at(rule: UrgencyRule, hours: SupportHours | None, moment: datetime) -> Urgency:
    """The urgency of an incident opened at `moment`."""
    if isinstance(rule, ConstantUrgency):
        return rule.urgency
    during = hours is not None and hours.holds(moment)
    return (rule.during_support_hours if during else rule.outside_support_hours).urgency


NEEDS_HOURS = "support_hours: a use_support_hours urgency rule needs them"


class UrgencyRuleError(DomainError):
    """An urgency rule by support hours on an integration without them."""

    code = "validation_error"


def lacks_hours(rule: UrgencyRule | None, hours: SupportHours | None) -> bool:
    """Whether `rule` goes by support hours that are not there."""
    return isinstance(rule, SupportHoursUrgency) and hours is None
