"""An integration's urgency rule (PagerDuty's ``incident_urgency_rule``): constant, or by its
support hours on their time zone's wall clock (across daylight saving, on the days named,
start included and end not); a rule by support hours without them, days named twice and
hours that end before they start are refused, naming the field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from incidents.alerts.models import IntegrationChanges, NewIntegration
from incidents.alerts.urgency import SupportHours, UrgencyRule, urgency_at
from incidents.contacts.models import Urgency

HOURS = {"time_zone": "America/Chicago", "days_of_week": [1, 2, 3, 4, 5],
         "start_time": "09:00:00", "end_time": "17:00:00"}  # fmt: skip
BY_HOURS = {"type": "use_support_hours",
            "during_support_hours": {"type": "constant", "urgency": "high"},
            "outside_support_hours": {"type": "constant", "urgency": "low"}}  # fmt: skip
RULES: TypeAdapter[UrgencyRule] = TypeAdapter(UrgencyRule)


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (datetime(2027, 3, 12, 14, 59, tzinfo=UTC), Urgency.LOW),  # Fri 08:59 CST
        (datetime(2027, 3, 12, 15, 0, tzinfo=UTC), Urgency.HIGH),  # Fri 09:00 CST
        (datetime(2027, 3, 15, 14, 0, tzinfo=UTC), Urgency.HIGH),  # Mon 09:00 CDT (DST)
        (datetime(2027, 3, 15, 22, 0, tzinfo=UTC), Urgency.LOW),  # Mon 17:00 CDT: ended
        (datetime(2027, 3, 13, 18, 0, tzinfo=UTC), Urgency.LOW),  # Sat noon
    ],
)
def test_support_hours_are_read_on_their_wall_clock(moment: datetime, expected: Urgency) -> None:
    hours = SupportHours.model_validate(HOURS)
    assert urgency_at(RULES.validate_python(BY_HOURS), hours, moment) is expected


def test_a_constant_rule_ignores_the_hours() -> None:
    low = RULES.validate_python({"type": "constant", "urgency": "low"})
    assert urgency_at(low, None, datetime(2027, 3, 12, 15, tzinfo=UTC)) is Urgency.LOW


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"incident_urgency_rule": BY_HOURS}, "support_hours: a use_support_hours"),
        ({"support_hours": {**HOURS, "days_of_week": [1, 1]}}, "each day once"),
        ({"support_hours": {**HOURS, "end_time": "08:00:00"}}, "end_time: after start_time"),
        ({"support_hours": {**HOURS, "time_zone": "Mars/Olympus"}}, "unknown time zone"),
        ({"support_hours": {**HOURS, "days_of_week": [0]}}, "greater than or equal to 1"),
        ({"support_hours": {**HOURS, "start_time": "09:00:00Z"}}, "should match pattern"),
        ({"incident_urgency_rule": {"type": "constant", "urgency": "medium"}}, "'high' or 'low'"),
    ],
)
def test_bad_rules_are_refused_naming_the_field(body: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        NewIntegration.model_validate({"name": "prometheus", **body})


def test_a_change_may_not_clear_the_rule() -> None:
    with pytest.raises(ValidationError, match="incident_urgency_rule: send"):
        IntegrationChanges.model_validate({"incident_urgency_rule": None})
