"""API Gateway's account settings: the CloudWatch role every REST API of the account and
region logs through.

``AWS::ApiGateway::Account`` is a singleton per account and region, not a resource of one
API: created inside a stage's stack (CDK's ``cloudWatchRole: true``), deleting that stage
would delete the role and break execution and access logging for every API of the region.
It lives here instead, in one stack per account and region that no stage owns, and both
resources are retained even if this stack is deleted.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from constructs import Construct

from stacks.nag import CLOUDWATCH_ROLE_POLICY, accept

STACK_NAME = "Incidents-ApiGatewayAccount"


class ApiGatewayAccountStack(Stack):
    """The role API Gateway pushes logs with, set as the account's CloudWatch role."""

    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        role = iam.Role(
            self,
            "CloudWatchRole",
            assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"),
            description="API Gateway pushes execution and access logs to CloudWatch Logs",
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name(
                    "service-role/AmazonAPIGatewayPushToCloudWatchLogs"
                )
            ],
        )
        role.apply_removal_policy(RemovalPolicy.RETAIN)
        account = apigw.CfnAccount(self, "Account", cloud_watch_role_arn=role.role_arn)
        account.apply_removal_policy(RemovalPolicy.RETAIN)
        accept(role, CLOUDWATCH_ROLE_POLICY)
