"""Schedule requests as the API takes them (PagerDuty's names): each limit refused with a
message naming the field, and a preview rendered from the request as the engine answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from incidents.errors import InvalidFilterError
from incidents.schedules.models import ScheduleRequest
from incidents.schedules.rendering import preview

ADA, BOB = "user_" + "a" * 27, "user_" + "b" * 27
MONDAY = datetime(2027, 3, 22, tzinfo=UTC)


def layer(**changes: Any) -> dict[str, Any]:
    return {
        "name": "Primary",
        "start": "2027-03-22T00:00:00Z",
        "users": [{"user_id": ADA}, {"user_id": BOB}],
        "rotation_virtual_start": "2027-03-22T09:00:00+00:00",
        "rotation_turn_length_seconds": 86400,
        **changes,
    }


def schedule(**changes: Any) -> dict[str, Any]:
    return {"name": "Ops", "time_zone": "Europe/London", "schedule_layers": [layer()], **changes}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (schedule(time_zone="Europe/Lodnon"), "unknown time zone 'Europe/Lodnon'"),
        (schedule(time_zone="+01:00"), "unknown time zone '\\+01:00'"),
        (schedule(schedule_layers=[]), "at least 1 item"),
        (schedule(schedule_layers=[layer()] * 11), "at most 10 items"),
        (
            schedule(schedule_layers=[layer(rotation_turn_length_seconds=59)]),
            "greater than or equal to 60",
        ),
        (
            schedule(schedule_layers=[layer(rotation_turn_length_seconds=365 * 86400 + 1)]),
            "less than or equal to 31536000",
        ),
        (schedule(schedule_layers=[layer(end="2027-03-21T00:00:00Z")]), "end must be after start"),
        (schedule(schedule_layers=[layer(users=[{"user_id": ADA}] * 101)]), "at most 100 items"),
        (
            schedule(schedule_layers=[layer(start="2027-03-22")]),
            "RFC 3339 date-time with its offset",
        ),
        (
            schedule(
                schedule_layers=[
                    layer(
                        restrictions=[
                            {
                                "type": "weekly_restriction",
                                "start_time_of_day": "09:00:00",
                                "duration_seconds": 7 * 86400 + 1,
                                "start_day_of_week": 1,
                            }
                        ]
                    )
                ]
            ),
            "less than or equal to 604800",
        ),
        (
            schedule(
                schedule_layers=[
                    layer(
                        restrictions=[
                            {
                                "type": "daily_restriction",
                                "start_time_of_day": "09:00:00",
                                "duration_seconds": 86401,
                            }
                        ]
                    )
                ]
            ),
            "at most 86400 seconds",
        ),
        (
            schedule(
                schedule_layers=[
                    layer(
                        restrictions=[
                            {
                                "type": "weekly_restriction",
                                "start_time_of_day": "09:00:00",
                                "duration_seconds": 3600,
                            }
                        ]
                    )
                ]
            ),
            "needs start_day_of_week",
        ),
        (
            schedule(
                schedule_layers=[
                    layer(
                        restrictions=[
                            {
                                "type": "daily_restriction",
                                "start_time_of_day": "9:00",
                                "duration_seconds": 3600,
                            }
                        ]
                    )
                ]
            ),
            "HH:mm:ss",
        ),
    ],
)
def test_a_bad_schedule_is_refused_naming_what_is_wrong(body: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        ScheduleRequest.model_validate(body)


def test_a_preview_renders_layers_and_the_final_schedule_with_their_coverage() -> None:
    office = {
        "type": "daily_restriction",
        "start_time_of_day": "09:00:00",
        "duration_seconds": 8 * 3600,
    }
    request = ScheduleRequest.model_validate(
        schedule(
            schedule_layers=[
                layer(),
                layer(name="Office", users=[{"user_id": BOB}], restrictions=[office]),
            ]
        )
    )
    shown = preview(request, [], MONDAY, MONDAY + timedelta(days=1)).model_dump(mode="json")
    assert shown["schedule_layers"][0]["rendered_coverage_percentage"] == 100.0
    assert shown["schedule_layers"][1]["rendered_coverage_percentage"] == round(100 * 8 / 24, 2)
    final = [
        (e["start"][11:16], e["end"][11:16], e["user"]["id"])
        for e in shown["final_schedule"]["rendered_schedule_entries"]
    ]
    # layer 1 has Bob until Ada's turn at 09:00, the office layer Bob from 09:00 to 17:00
    assert final == [("00:00", "17:00", BOB), ("17:00", "00:00", ADA)]
    assert shown["overrides_subschedule"]["rendered_schedule_entries"] == []


@pytest.mark.parametrize(
    ("since", "until", "says"),
    [
        (MONDAY, MONDAY, "since must be before until"),
        (MONDAY, MONDAY + timedelta(days=90, seconds=1), "at most 90 days"),
    ],
)
def test_a_preview_s_range_is_checked(since: datetime, until: datetime, says: str) -> None:
    with pytest.raises(InvalidFilterError, match=says):
        preview(ScheduleRequest.model_validate(schedule()), [], since, until)
