#!/usr/bin/env python3
"""CDK app entry point (`cdk synth`, `cdk deploy`): the data and API stacks of one stage,
checked by cdk-nag's AwsSolutions pack."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "layers" / "shared" / "python"))

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from stacks.account_stack import STACK_NAME as ACCOUNT_STACK
from stacks.account_stack import ApiGatewayAccountStack
from stacks.api_stack import ApiStack
from stacks.config import stage_config
from stacks.data_stack import DataStack


def build(app: cdk.App) -> tuple[DataStack, ApiStack, ApiGatewayAccountStack]:
    """The stacks of the stage named by the `stage` context (default `dev`), and the
    account's API Gateway settings, which no stage owns."""
    stage = app.node.try_get_context("stage") or "dev"
    config = stage_config(stage, app.node.try_get_context("stages"))
    account = ApiGatewayAccountStack(app, ACCOUNT_STACK)
    data = DataStack(app, f"Incidents-{stage}-Data", config)
    api = ApiStack(app, f"Incidents-{stage}-Api", table=data.table, config=config)
    api.add_stack_dependency(account, "the stage logs through the account's CloudWatch role")
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
    return data, api, account


def main() -> None:
    """Synthesize the app."""
    app = cdk.App()
    build(app)
    app.synth()


if __name__ == "__main__":
    main()
