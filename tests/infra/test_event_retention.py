"""The stage's event retention reaches the functions, and a retention the functions would
refuse at cold start fails `cdk synth` instead."""

from __future__ import annotations

import pytest

from lambdas.settings import EVENT_RETENTION_DAYS, event_retention_days
from stacks.config import stage_config


def test_a_stage_without_retention_keeps_events_for_ever() -> None:
    config = stage_config("dev", {})
    assert EVENT_RETENTION_DAYS not in config.lambda_environment()
    assert event_retention_days(config.lambda_environment()) is None


def test_a_stage_retention_reaches_the_functions() -> None:
    config = stage_config("prod", {"prod": {"eventRetentionDays": 400}})
    assert event_retention_days(config.lambda_environment()) == 400


@pytest.mark.parametrize("days", [0, -3])
def test_a_retention_below_one_day_fails_synth(days: int) -> None:
    with pytest.raises(ValueError, match="eventRetentionDays"):
        stage_config("prod", {"prod": {"eventRetentionDays": days}})
