"""Data stack: the single table, built from the shared schema in `incidents.table`."""

from __future__ import annotations

from aws_cdk import CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from dynashard.schema import TableSchema
from incidents.table import TABLE_SCHEMA


def _string_attribute(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


def table_from_schema(scope: Construct, construct_id: str, schema: TableSchema) -> dynamodb.TableV2:
    """An on-demand TableV2 with exactly the keys and indexes of `schema`, kept on delete."""
    return dynamodb.TableV2(
        scope,
        construct_id,
        partition_key=_string_attribute(schema.partition_key),
        sort_key=_string_attribute(schema.sort_key),
        billing=dynamodb.Billing.on_demand(),
        global_secondary_indexes=[
            dynamodb.GlobalSecondaryIndexPropsV2(
                index_name=index.name,
                partition_key=_string_attribute(index.partition_key),
                sort_key=_string_attribute(index.sort_key),
                projection_type=dynamodb.ProjectionType.ALL,
            )
            for index in schema.indexes
        ],
        time_to_live_attribute=schema.ttl_attribute,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        deletion_protection=True,
        removal_policy=RemovalPolicy.RETAIN,
    )


class DataStack(Stack):
    """Owns the table; other stacks receive it as a constructor argument."""

    def __init__(self, scope: Construct, construct_id: str, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        self.table = table_from_schema(self, "Table", TABLE_SCHEMA)
        CfnOutput(self, "TableName", value=self.table.table_name)
