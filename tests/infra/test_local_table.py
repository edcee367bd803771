"""The table tests and `make dev` create locally has the synthesized table's keys and indexes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.synth import Synthesized

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration


def _keys(schema: list[Any]) -> list[tuple[str, str]]:
    return [(k["AttributeName"], k["KeyType"]) for k in schema]


def test_local_table_matches_the_synthesized_one(
    dev: Synthesized, dynamodb: DynamoDBClient, table_name: str
) -> None:
    (resource,) = dev.data.find_resources("AWS::DynamoDB::GlobalTable").values()
    synthesized = resource["Properties"]
    local = dynamodb.describe_table(TableName=table_name)["Table"]

    assert _keys(local["KeySchema"]) == _keys(synthesized["KeySchema"])
    assert {(a["AttributeName"], a["AttributeType"]) for a in local["AttributeDefinitions"]} == {
        (a["AttributeName"], a["AttributeType"]) for a in synthesized["AttributeDefinitions"]
    }
    local_indexes = {
        i["IndexName"]: (_keys(i["KeySchema"]), i["Projection"]["ProjectionType"])
        for i in local["GlobalSecondaryIndexes"]
    }
    synthesized_indexes = {
        i["IndexName"]: (_keys(i["KeySchema"]), i["Projection"]["ProjectionType"])
        for i in synthesized["GlobalSecondaryIndexes"]
    }
    assert local_indexes == synthesized_indexes
    assert local["BillingModeSummary"]["BillingMode"] == synthesized["BillingMode"]
    ttl = dynamodb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    assert ttl.get("AttributeName") == synthesized["TimeToLiveSpecification"]["AttributeName"]
    stream = local["StreamSpecification"]
    assert stream == {"StreamEnabled": True, **synthesized["StreamSpecification"]}
    assert stream["StreamViewType"] == "NEW_IMAGE"
