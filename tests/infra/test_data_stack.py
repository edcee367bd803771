"""The data stack's table, checked in the synthesized template."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk.assertions import Match, Template

from incidents.table import TABLE_SCHEMA
from stacks.data_stack import DataStack


def synth_data_stack() -> Template:
    app = cdk.App()
    return Template.from_stack(DataStack(app, "Data"))


def test_table_keys_indexes_and_protection() -> None:
    template = synth_data_stack()
    template.resource_count_is("AWS::DynamoDB::GlobalTable", 1)
    template.has_resource(
        "AWS::DynamoDB::GlobalTable",
        {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"},
    )
    template.has_resource_properties(
        "AWS::DynamoDB::GlobalTable",
        {
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [
                {"AttributeName": "PK", "KeyType": "HASH"},
                {"AttributeName": "SK", "KeyType": "RANGE"},
            ],
            "TimeToLiveSpecification": {"AttributeName": "ExpiresAt", "Enabled": True},
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": index.name,
                    "KeySchema": [
                        {"AttributeName": index.partition_key, "KeyType": "HASH"},
                        {"AttributeName": index.sort_key, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                }
                for index in TABLE_SCHEMA.indexes
            ],
            "Replicas": [
                Match.object_like(
                    {
                        "DeletionProtectionEnabled": True,
                        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                    }
                )
            ],
        },
    )


def test_every_key_attribute_is_a_string() -> None:
    table = synth_data_stack().find_resources("AWS::DynamoDB::GlobalTable")
    (resource,) = table.values()
    definitions = resource["Properties"]["AttributeDefinitions"]
    assert {d["AttributeName"]: d["AttributeType"] for d in definitions} == dict.fromkeys(
        TABLE_SCHEMA.key_attributes(), "S"
    )
