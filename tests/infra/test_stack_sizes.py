"""Every stack CloudFormation deploys, nested ones included, far from its limit of 500
resources: each stage of cdk.json with every optional part on (alarm alerts), so a stack
that grows towards the limit fails here long before `cdk deploy` would refuse it."""

from __future__ import annotations

import json

import pytest

from lambdas.routes import ROUTES, Group, Route
from stacks.api_routes import SUBJECTS, first_part, routes_by_subject
from tests.helpers.synth import CDK_JSON, Stages

CLOUDFORMATION_LIMIT = 500
FAIL_ABOVE = 400
"""A stack this full has room for a few more routes or alarms, not for a subject: split it
(decision 016)."""
STAGES = sorted(json.loads(CDK_JSON.read_text())["context"]["stages"])


@pytest.mark.parametrize("stage", STAGES)
def test_every_stack_of_the_stage_stays_far_from_the_limit(
    synthesized: Stages, stage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = json.loads(CDK_JSON.read_text())["context"]["stages"][stage]
    everything_on = {stage: {**settings, "alarmIntegrationKeySecret": "incidents/alarm-key"}}
    counts = synthesized(stage, everything_on).stacks
    with capsys.disabled():
        for path, count in counts.items():
            print(f"\n{stage}: {path} {count} of {CLOUDFORMATION_LIMIT} resources", end="")
    assert any(path.endswith("/AlarmAlerts") for path in counts), "alarm alerts are on"
    assert len(counts) > 3, "the API's nested stacks are counted"
    over = {path: count for path, count in counts.items() if count > FAIL_ABOVE}
    assert not over, f"stacks over {FAIL_ABOVE} resources: {over}"


def test_each_route_belongs_to_exactly_one_subject() -> None:
    grouped = routes_by_subject()
    assert sum(map(len, grouped.values())) == len(ROUTES)
    parts = [part for parts in SUBJECTS.values() for part in parts]
    assert len(parts) == len(set(parts)), "a path subtree in two nested stacks"
    assert {first_part(route) for route in ROUTES.values()} == set(parts)


def test_a_route_no_subject_holds_fails_the_synth_naming_it() -> None:
    stray = Route("GET", "/services", Group.TEAMS, "List services")
    with pytest.raises(ValueError, match=r"list_services \(GET /services\).*under /services"):
        routes_by_subject({**ROUTES, "list_services": stray})
