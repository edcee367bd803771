"""The moto fallback stays within a stated memory: once its process holds more than the cap,
writes are refused the way DynamoDB refuses work over a limit (reads still answer). moto
itself cannot be bounded: it deep-copies the table in every TransactWriteItems and keeps
the memory."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from dynashard.throttling import error_code
from incidents.table import TABLE_SCHEMA
from local.engines.clients import create_table, local_client
from local.engines.moto_server import moto_server, resident_mb

KEY = {"PK": {"S": "p"}, "SK": {"S": "s"}}


def test_writes_within_the_cap_are_served() -> None:
    with moto_server(memory_cap_mb=resident_mb() + 500) as endpoint:
        client = local_client(endpoint)
        create_table(client, TABLE_SCHEMA, "roomy")
        client.put_item(TableName="roomy", Item=KEY)
        assert client.get_item(TableName="roomy", Key=KEY)["Item"] == KEY


def test_writes_over_the_cap_are_refused_and_reads_still_answer() -> None:
    with moto_server(memory_cap_mb=1) as endpoint:
        client = local_client(endpoint)
        create_table(client, TABLE_SCHEMA, "tight")  # CreateTable is not an item write
        with pytest.raises(ClientError) as refused:
            client.put_item(TableName="tight", Item=KEY)
        assert error_code(refused.value) == "LimitExceededException"
        assert "moto fallback" in str(refused.value)
        assert client.scan(TableName="tight")["Items"] == []
