"""Per-stage settings, read from the ``stages`` entry of ``cdk.json``'s context.

``cdk deploy -c stage=prod`` picks ``stages.prod``; anything missing there takes the
defaults below. Shard counts are part of the data's address: ``summaryShards`` must never
change once a stage holds incidents (a GET computes the shard from it), while the state
counts may only grow by doubling (readers always cover the configured count).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_logs as logs

from incidents.keys import DEFAULT_STATE_SHARDS, DEFAULT_SUMMARY_SHARDS
from lambdas.settings import ShardSettings, origins_environment

REMOVAL_POLICIES = {"retain": RemovalPolicy.RETAIN, "destroy": RemovalPolicy.DESTROY}


@dataclass(frozen=True)
class StageConfig:
    """Everything that differs between stages."""

    stage: str
    removal_policy: str = "retain"
    summary_shards: int = DEFAULT_SUMMARY_SHARDS
    state_shards: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_STATE_SHARDS))
    participant_default_shards: int = 1
    participant_max_shards: int = 64
    log_retention: str = "ONE_MONTH"
    throttle_rate_limit: int = 100
    throttle_burst_limit: int = 200
    cors_origins: tuple[str, ...] = ()
    alarm_email: str | None = None

    def __post_init__(self) -> None:
        if self.removal_policy not in REMOVAL_POLICIES:
            raise ValueError(
                f"stages.{self.stage}.removalPolicy must be one of {sorted(REMOVAL_POLICIES)}"
            )
        self.shards()  # raises on counts the functions would refuse at cold start
        if self.log_retention not in logs.RetentionDays.__members__:
            raise ValueError(
                f"stages.{self.stage}.logRetention must name a logs.RetentionDays member "
                f"(ONE_WEEK, ONE_MONTH, ONE_YEAR, ...), got {self.log_retention!r}"
            )

    def shards(self) -> ShardSettings:
        """The stage's shard settings, as the functions will read them."""
        return ShardSettings(
            summary_shards=self.summary_shards,
            state_shards=self.state_shards,
            participant_default_shards=self.participant_default_shards,
            participant_max_shards=self.participant_max_shards,
        )

    def lambda_environment(self) -> dict[str, str]:
        """What `lambdas.settings` reads back at cold start to build the same store."""
        return {**self.shards().to_environment(), **origins_environment(self.cors_origins)}

    @property
    def removal(self) -> RemovalPolicy:
        """The table's and the user pool's removal policy."""
        return REMOVAL_POLICIES[self.removal_policy]

    @property
    def retention(self) -> logs.RetentionDays:
        """Retention of every log group of the stage."""
        return logs.RetentionDays[self.log_retention]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_KEYS = {_camel(f.name): f.name for f in fields(StageConfig) if f.name != "stage"}
"""``cdk.json`` spells each setting in camelCase: ``summaryShards`` is ``summary_shards``."""


def stage_config(stage: str, stages: dict[str, Any] | None) -> StageConfig:
    """The settings of `stage` from the ``stages`` context (unknown keys are errors)."""
    raw = dict((stages or {}).get(stage) or {})
    unknown = sorted(set(raw) - set(_KEYS))
    if unknown:
        raise ValueError(f"stages.{stage}: unknown settings {unknown}; known: {sorted(_KEYS)}")
    values = {_KEYS[name]: value for name, value in raw.items()}
    if "cors_origins" in values:
        values["cors_origins"] = tuple(values["cors_origins"])
    return StageConfig(stage=stage, **values)
