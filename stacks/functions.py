"""One Lambda function as every function of the app is built: its own log group with the
stage's retention, its own role (which starts with writing that log group and nothing
else), the shared layer, ARM64 on Python 3.13, X-Ray, and the Powertools settings.

A function whose spec asks for it starts from a SnapStart snapshot in a stage that turns
SnapStart on (decision 020): SnapStart serves published versions only, so its callers
invoke `entry_point`, the ``live`` alias of the version each deployment publishes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from stacks.config import StageConfig
from stacks.shared_layer import ARCHITECTURE, RUNTIME, handler_code

METRICS_NAMESPACE = "Incidents"
LIVE_ALIAS = "live"
"""The alias a snapshotted function's callers invoke: the version the last deployment
published (and Lambda snapshotted)."""
REPLACED_VERSIONS_DELETED = lambda_.VersionOptions(removal_policy=RemovalPolicy.DESTROY)
"""A snapshotted function's version that a deployment replaces is deleted with its
snapshot: one retained stays cached, and charged, until Lambda drops it unused."""


@dataclass(frozen=True)
class FunctionSpec:
    """What differs between functions."""

    name: str
    """The construct ids' base (``incident_queries``, ``publisher``...)."""
    handler: str
    description: str
    memory_mb: int
    timeout: Duration
    reserved: int | None = None
    snapshotted: bool = False
    """Whether it starts from a snapshot where the stage turns SnapStart on: the functions
    a person's request waits on when cold (decision 020)."""


@dataclass(frozen=True)
class Runtime:
    """What every function shares: code, layer and stage."""

    layer: lambda_.ILayerVersion
    config: StageConfig
    _code: dict[str, lambda_.Code] = field(default_factory=dict, compare=False, repr=False)

    def code(self, scope: Construct) -> lambda_.Code:
        """The handlers' asset for the stack of `scope`: an asset belongs to one stack, and
        the API's nested stacks each build functions from the same files."""
        stack = Stack.of(scope).node.path
        if stack not in self._code:
            self._code[stack] = handler_code()
        return self._code[stack]


def handler_function(
    scope: Construct, spec: FunctionSpec, runtime: Runtime, environment: dict[str, str]
) -> tuple[lambda_.Function, iam.Role]:
    """The function and its role; callers grant it exactly what it calls."""
    config = runtime.config
    snapshotted = snap_start(spec, config)
    log_group = logs.LogGroup(
        scope, f"{spec.name}-logs", retention=config.retention, removal_policy=config.removal
    )
    role = iam.Role(
        scope,
        f"{spec.name}-role",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=f"incidents {spec.name.replace('_', '-')}: exactly what it calls",
    )
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[log_group.log_group_arn],
        )
    )
    function = lambda_.Function(
        scope,
        spec.name,
        description=spec.description,
        runtime=RUNTIME,
        architecture=ARCHITECTURE,
        handler=spec.handler,
        code=runtime.code(scope),
        layers=[runtime.layer],
        role=role,
        memory_size=spec.memory_mb,
        timeout=spec.timeout,
        reserved_concurrent_executions=spec.reserved,
        tracing=lambda_.Tracing.ACTIVE,
        log_group=log_group,
        snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if snapshotted else None,
        current_version_options=REPLACED_VERSIONS_DELETED if snapshotted else None,
        environment={
            "POWERTOOLS_SERVICE_NAME": "incidents",
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": "INFO",
            **environment,
            **config.lambda_environment(),
        },
    )
    return function, role


def snap_start(spec: FunctionSpec, config: StageConfig) -> bool:
    """Whether `spec`'s function starts from a snapshot in `config`'s stage."""
    return spec.snapshotted and config.snap_start


def entry_point(
    function: lambda_.Function, spec: FunctionSpec, config: StageConfig
) -> lambda_.IFunction:
    """What callers invoke: a snapshotted function's ``live`` alias of the version this
    deployment published (its unpublished ``$LATEST`` would start cold, without the
    snapshot), otherwise the function itself."""
    if not snap_start(spec, config):
        return function
    return lambda_.Alias(function, "Live", alias_name=LIVE_ALIAS, version=function.current_version)


def grant_table(
    role: iam.Role, table: dynamodb.ITableV2, actions: Sequence[str], indexes: Sequence[str]
) -> None:
    """`actions` on the table, and Query on `indexes` (if any): what a background function
    calls."""
    role.add_to_policy(iam.PolicyStatement(actions=list(actions), resources=[table.table_arn]))
    if indexes:
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["dynamodb:Query"],
                resources=[f"{table.table_arn}/index/{index}" for index in indexes],
            )
        )
