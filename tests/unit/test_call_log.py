"""The call log turns API calls into the IAM permissions DynamoDB checks for them."""

from __future__ import annotations

from local.api.call_log import permissions


def test_a_transaction_needs_the_action_of_each_item() -> None:
    params = {
        "TransactItems": [
            {"Put": {"TableName": "t", "Item": {}}},
            {"Update": {"TableName": "t", "Key": {}}},
            {"ConditionCheck": {"TableName": "t", "Key": {}}},
            {"Delete": {"TableName": "other", "Key": {}}},
        ]
    }
    assert list(permissions("TransactWriteItems", params, "t")) == [
        ("dynamodb:PutItem", "table"),
        ("dynamodb:UpdateItem", "table"),
        ("dynamodb:ConditionCheckItem", "table"),
        ("dynamodb:DeleteItem", "other-table:other"),
    ]


def test_batches_need_their_action_per_table_and_queries_the_index() -> None:
    assert list(permissions("BatchGetItem", {"RequestItems": {"t": {}, "u": {}}}, "t")) == [
        ("dynamodb:BatchGetItem", "table"),
        ("dynamodb:BatchGetItem", "other-table:u"),
    ]
    writes: dict[str, object] = {"RequestItems": {"t": [{"PutRequest": {}}, {"DeleteRequest": {}}]}}
    batched = list(permissions("BatchWriteItem", writes, "t"))
    assert batched == [("dynamodb:BatchWriteItem", "table")]
    query = {"TableName": "t", "IndexName": "GSI1"}
    assert list(permissions("Query", query, "t")) == [("dynamodb:Query", "table/index/GSI1")]
