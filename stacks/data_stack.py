"""Data stack: the single table, built from the shared schema in `incidents.table`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from dynashard import TableSchema
from incidents.table import TABLE_SCHEMA
from stacks.config import StageConfig


def _string_attribute(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


@dataclass(frozen=True)
class MaxThroughput:
    """On-demand maximum request units per second, for the table and each index alike: a
    cost guard that throttles a runaway client instead of billing it (`None`: no cap)."""

    read: int | None = None
    write: int | None = None


def table_from_schema(
    scope: Construct,
    construct_id: str,
    schema: TableSchema,
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    max_throughput: MaxThroughput = MaxThroughput(),
) -> dynamodb.TableV2:
    """An on-demand TableV2 with exactly the keys and indexes of `schema`.

    The stream carries new images (the timeline's events go out from it: the transactional
    outbox's relay). Point-in-time recovery and CloudWatch Contributor Insights (the hottest
    keys of the table and of every index: what sharding is about) are on; deletion protection is on
    whenever the table is retained. Encryption uses the AWS owned key (decision 003).
    """
    table = dynamodb.TableV2(
        scope,
        construct_id,
        partition_key=_string_attribute(schema.partition_key),
        sort_key=_string_attribute(schema.sort_key),
        billing=dynamodb.Billing.on_demand(
            max_read_request_units=max_throughput.read,
            max_write_request_units=max_throughput.write,
        ),
        global_secondary_indexes=[
            dynamodb.GlobalSecondaryIndexPropsV2(
                index_name=index.name,
                partition_key=_string_attribute(index.partition_key),
                sort_key=_string_attribute(index.sort_key),
                projection_type=dynamodb.ProjectionType.ALL,
                max_read_request_units=max_throughput.read,
                max_write_request_units=max_throughput.write,
            )
            for index in schema.indexes
        ],
        time_to_live_attribute=schema.ttl_attribute,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        contributor_insights_specification=dynamodb.ContributorInsightsSpecification(enabled=True),
        encryption=dynamodb.TableEncryptionV2.dynamo_owned_key(),
        deletion_protection=removal_policy == RemovalPolicy.RETAIN,
        dynamo_stream=dynamodb.StreamViewType(schema.stream_view) if schema.stream_view else None,
        removal_policy=removal_policy,
    )
    _replica_indexes(table, schema, max_throughput.read)
    return table


def _replica_indexes(table: dynamodb.TableV2, schema: TableSchema, max_read: int | None) -> None:
    """TableV2 turns Contributor Insights on for the table only; the indexes (where the
    sharded list keys live) get it through the replica's per-index specification, which
    also carries each index's maximum read throughput."""
    read_cap = {"ReadOnDemandThroughputSettings": {"MaxReadRequestUnits": max_read}}
    cfn = table.node.default_child
    assert isinstance(cfn, dynamodb.CfnGlobalTable)
    cfn.add_property_override(
        "Replicas.0.GlobalSecondaryIndexes",
        [
            {
                "IndexName": index.name,
                "ContributorInsightsSpecification": {"Enabled": True},
                **(read_cap if max_read else {}),
            }
            for index in schema.indexes
        ],
    )


class DataStack(Stack):
    """Owns the table; other stacks receive it as a constructor argument."""

    def __init__(
        self, scope: Construct, construct_id: str, config: StageConfig, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.table = table_from_schema(
            self,
            "Table",
            TABLE_SCHEMA,
            config.removal,
            MaxThroughput(
                config.table_max_read_request_units, config.table_max_write_request_units
            ),
        )
        CfnOutput(self, "TableName", value=self.table.table_name)
