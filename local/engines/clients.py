"""Clients and tables for local DynamoDB engines (DynamoDB Local, moto, or your own server).

Dummy credentials and a fixed region keep every local call away from real AWS; the table is
created from the shared schema, so local runs see exactly the keys and indexes the CDK
stack deploys.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import TYPE_CHECKING

import boto3
from aiobotocore.session import ClientCreatorContext, get_session
from botocore.config import Config
from botocore.exceptions import ClientError

from dynashard import TableSchema
from dynashard.aio import client_config as async_client_config
from dynashard.throttling import error_code

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from types_aiobotocore_dynamodb import DynamoDBClient as AsyncDynamoDBClient

LOCAL_REGION = "us-east-1"
LOCAL_KEY_ID = "local"
LOCAL_SECRET = "local"
UNSUPPORTED_OPERATION = {"UnknownOperationException", "NotImplementedException"}
logger = logging.getLogger(__name__)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def use_local_credentials() -> None:
    """Point boto3's default chain at dummy credentials so nothing reaches real AWS."""
    os.environ.setdefault("AWS_DEFAULT_REGION", LOCAL_REGION)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", LOCAL_KEY_ID)
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", LOCAL_SECRET)


def local_client(endpoint_url: str, max_pool_connections: int = 10) -> DynamoDBClient:
    """A DynamoDB client for a local endpoint with dummy credentials."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=LOCAL_REGION,
        config=Config(max_pool_connections=max_pool_connections),
        aws_access_key_id=LOCAL_KEY_ID,
        aws_secret_access_key=LOCAL_SECRET,
    )


def async_local_client(
    endpoint_url: str, max_pool_connections: int = 10
) -> ClientCreatorContext[AsyncDynamoDBClient]:
    """An aiobotocore DynamoDB client for a local endpoint with dummy credentials, to enter
    with ``async with`` on the event loop that uses it."""
    return get_session().create_client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=LOCAL_REGION,
        config=async_client_config(max_pool_connections),
        aws_access_key_id=LOCAL_KEY_ID,
        aws_secret_access_key=LOCAL_SECRET,
    )


def create_table(client: DynamoDBClient, schema: TableSchema, table_name: str) -> None:
    """Create `table_name` from `schema`, wait until it is active, and enable its TTL."""
    client.create_table(**schema.create_table_request(table_name))
    client.get_waiter("table_exists").wait(
        TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
    )
    if schema.ttl_attribute:
        enable_ttl(client, table_name, schema.ttl_attribute)


def enable_ttl(client: DynamoDBClient, table_name: str, attribute: str) -> None:
    """Turn TTL on; an engine without ``UpdateTimeToLive`` keeps the table, without expiry."""
    try:
        client.update_time_to_live(
            TableName=table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": attribute},
        )
    except ClientError as error:
        if error_code(error) not in UNSUPPORTED_OPERATION:
            raise
        logger.warning("this engine has no TTL (%s): expired items stay", error_code(error))
