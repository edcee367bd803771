"""From ``cdk.json`` to the store: the stage's shard settings and account limits reach the
functions, and a bad value stops a container at cold start instead of serving from the
wrong key space (or with a limit an alert's read cannot hold)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lambdas.routes import Group
from lambdas.settings import SettingsError, ShardSettings, account_limits
from stacks.config import stage_config
from tests.helpers.synth import Stages, Synthesized, function_of

ROOT = Path(__file__).resolve().parents[2]
CUSTOM = {
    "summaryShards": 32,
    "stateShards": {"OPEN": 16, "CLOSED": 64},
    "participantDefaultShards": 2,
    "participantMaxShards": 128,
    "heartbeatsPerAccount": 200,
    "maintenanceWindowsPerAccount": 20,
    "schedulesPerAccount": 300,
}
PROBE = """
import json
from lambdas import runtime
store = runtime.store()
print(json.dumps({
    "summary": store.config.summary_shards,
    "states": {state: store.config.state_shards.count_for(state) for state in ("OPEN", "CLOSED")},
    "default": store.counts.policy.default_count,
    "max": store.counts.policy.max_count,
    "limits": [store.limits.heartbeats, store.limits.maintenance_windows, store.limits.schedules],
}))
"""


def cold_start(environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Import the runtime in a fresh interpreter with `environment`, as a new container."""
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": f"{ROOT / 'layers' / 'shared' / 'python'}{os.pathsep}{ROOT}",
        "AWS_DEFAULT_REGION": "us-east-1",
        "TABLE_NAME": "t",
        "CURSOR_SECRET": "c" * 40,
        "POWERTOOLS_TRACE_DISABLED": "true",
        **environment,
    }
    return subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=False
    )


def function_environment(synthesized: Synthesized, group: Group) -> dict[str, str]:
    """The literal environment variables the template gives `group`'s function."""
    _, function = function_of(synthesized, group)
    variables: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return {name: value for name, value in variables.items() if isinstance(value, str)}


@pytest.mark.parametrize(
    ("stage", "extra", "expected"),
    [
        (
            "prod",
            None,
            {
                "summary": 16,
                "states": {"OPEN": 8, "CLOSED": 32},
                "default": 1,
                "max": 256,
                "limits": [1000, 50, 1000],
            },
        ),
        (
            "custom",
            {"custom": CUSTOM},
            {
                "summary": 32,
                "states": {"OPEN": 16, "CLOSED": 64},
                "default": 2,
                "max": 128,
                "limits": [200, 20, 300],
            },
        ),
    ],
)
def test_the_stage_settings_reach_the_store_of_every_function(
    synthesized: Stages, stage: str, extra: dict[str, dict[str, object]] | None, expected: object
) -> None:
    synth = synthesized(stage, extra)
    for group in Group:
        environment = function_environment(synth, group)
        environment.pop("CURSOR_SECRET_ARN", None)
        started = cold_start(environment)
        assert started.returncode == 0, started.stderr[-2000:]
        assert json.loads(started.stdout) == expected, group


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("SUMMARY_SHARDS", "12", "power of two"),
        ("SUMMARY_SHARDS", "sixteen", "whole number"),
        ("STATE_SHARDS", '{"OPEN": 8}', "exactly ['CLOSED', 'OPEN']"),
        ("STATE_SHARDS", '{"OPEN": 8, "CLOSED": "32"}', "whole number"),
        ("STATE_SHARDS", "OPEN=8", "JSON object"),
        ("PARTICIPANT_MAX_SHARDS", "48", "power of two"),
        ("PARTICIPANT_DEFAULT_SHARDS", "128", "above max_count"),
    ],
)
def test_a_bad_setting_fails_the_cold_start_naming_it(variable: str, value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=variable.split("_", maxsplit=1)[0]) as raised:
        ShardSettings.from_environment({variable: value})
    assert says in str(raised.value)
    started = cold_start({variable: value})
    assert started.returncode != 0
    assert "SettingsError" in started.stderr
    assert variable.split("_", maxsplit=1)[0] in started.stderr


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("HEARTBEATS_PER_ACCOUNT", "0", "at least 1"),
        ("SCHEDULES_PER_ACCOUNT", "many", "whole number"),
        ("MAINTENANCE_WINDOWS_PER_ACCOUNT", "1001", "at most 1000"),
    ],
)
def test_a_bad_account_limit_fails_the_cold_start_naming_it(
    variable: str, value: str, says: str
) -> None:
    with pytest.raises(SettingsError, match=variable) as raised:
        account_limits({variable: value})
    assert says in str(raised.value)
    started = cold_start({variable: value})
    assert started.returncode != 0
    assert "SettingsError" in started.stderr
    assert variable in started.stderr


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("heartbeatsPerAccount", 0, "heartbeatsPerAccount must be a positive integer"),
        ("schedulesPerAccount", True, "schedulesPerAccount must be a positive integer"),
        ("maintenanceWindowsPerAccount", 1001, "maintenanceWindowsPerAccount: MAINTENANCE"),
    ],
)
def test_an_account_limit_the_functions_would_refuse_fails_the_synth(
    key: str, value: object, says: str
) -> None:
    with pytest.raises(ValueError, match=says):
        stage_config("x", {"x": {key: value}})


def test_settings_round_trip_through_the_environment() -> None:
    settings = ShardSettings(32, {"OPEN": 4, "CLOSED": 128}, 2, 512)
    assert ShardSettings.from_environment(settings.to_environment()) == settings
    assert ShardSettings.from_environment({}) == ShardSettings()


@pytest.mark.parametrize(
    "origins",
    [["http://localhost:3000/"], ["localhost:3000"], ["*"], ["https://app.example.com/x"]],
)
def test_an_origin_the_functions_would_refuse_fails_the_synth(origins: list[str]) -> None:
    """Caught at `cdk synth`, not at the first cold start in the cloud."""
    with pytest.raises(ValueError, match="corsOrigins: CORS_ALLOWED_ORIGINS"):
        stage_config("x", {"x": {"corsOrigins": origins}})
