"""A dead engine is an error, not a hang: the handlers' client gives up on a server that
accepts connections and never answers (what a wedged local engine does) within its
timeouts and retries."""

from __future__ import annotations

import socket
import time

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError

from lambdas.runtime import CONNECT_SECONDS, READ_SECONDS, client_settings
from local.engines.clients import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET


def test_a_silent_engine_fails_the_request_within_the_timeouts() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # listens, never answers
        port = silent.getsockname()[1]
        client = boto3.client(
            "dynamodb",
            endpoint_url=f"http://127.0.0.1:{port}",
            region_name=LOCAL_REGION,
            aws_access_key_id=LOCAL_KEY_ID,
            aws_secret_access_key=LOCAL_SECRET,
            config=client_settings(),
        )
        began = time.monotonic()
        with pytest.raises(ReadTimeoutError):
            client.get_item(TableName="t", Key={"PK": {"S": "p"}, "SK": {"S": "s"}})
        elapsed = time.monotonic() - began
    attempts = 3  # botocore's standard retry mode
    assert elapsed < attempts * (READ_SECONDS + CONNECT_SECONDS) + 5, elapsed
