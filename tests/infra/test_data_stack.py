"""The data stack's table, checked in the synthesized template."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from incidents.table import TABLE_SCHEMA
from stacks.config import stage_config
from tests.helpers.synth import Stages, Synthesized


def the_table(template: Template) -> Mapping[str, Any]:
    (resource,) = template.find_resources("AWS::DynamoDB::GlobalTable").values()
    return resource


def test_table_keys_indexes_and_protection(dev: Synthesized) -> None:
    dev.data.resource_count_is("AWS::DynamoDB::GlobalTable", 1)
    dev.data.has_resource(
        "AWS::DynamoDB::GlobalTable",
        {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"},
    )
    dev.data.has_resource_properties(
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
                        "ContributorInsightsSpecification": {"Enabled": True},
                    }
                )
            ],
        },
    )


def test_every_key_attribute_is_a_string(dev: Synthesized) -> None:
    definitions = the_table(dev.data)["Properties"]["AttributeDefinitions"]
    assert {d["AttributeName"]: d["AttributeType"] for d in definitions} == dict.fromkeys(
        TABLE_SCHEMA.key_attributes(), "S"
    )


def test_contributor_insights_cover_every_used_index(dev: Synthesized) -> None:
    (replica,) = the_table(dev.data)["Properties"]["Replicas"]
    indexes = {
        spec["IndexName"]: spec["ContributorInsightsSpecification"]["Enabled"]
        for spec in replica.get("GlobalSecondaryIndexes", [])
    }
    assert indexes == {"GSI1": True, "GSI2": True, "GSI3": True}


def test_encryption_uses_the_aws_owned_key(dev: Synthesized) -> None:
    properties = the_table(dev.data)["Properties"]
    assert "SSESpecification" not in properties or properties["SSESpecification"] == {
        "SSEEnabled": False
    }


def test_a_throwaway_stage_can_choose_destroy(synthesized: Stages) -> None:
    scratch = synthesized("scratch", {"scratch": {"removalPolicy": "destroy"}})
    scratch.data.has_resource("AWS::DynamoDB::GlobalTable", {"DeletionPolicy": "Delete"})
    (replica,) = the_table(scratch.data)["Properties"]["Replicas"]
    assert replica.get("DeletionProtectionEnabled", False) is False


def test_stage_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="removalPolicy"):
        stage_config("x", {"x": {"removalPolicy": "keep"}})
    with pytest.raises(ValueError, match="unknown settings"):
        stage_config("x", {"x": {"summaryShard": 8}})
    with pytest.raises(ValueError, match="power of two"):
        stage_config("x", {"x": {"summaryShards": 12}})
    with pytest.raises(ValueError, match="logRetention"):
        stage_config("x", {"x": {"logRetention": "FOREVER-ISH"}})
