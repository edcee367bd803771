"""The documented sign-in (SRP, the only password flow the client allows) works against a
Cognito user pool (moto's, which runs the SRP exchange) and reports a refusal in one line."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tools.sign_in import main

PASSWORD = "Change-me-42!"


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        cognito = boto3.client("cognito-idp", region_name="eu-west-1")
        pool_id = cognito.create_user_pool(
            PoolName="users",
            Schema=[
                {"Name": "account_id", "AttributeDataType": "String", "Mutable": False},
                {"Name": "user_id", "AttributeDataType": "String", "Mutable": False},
            ],
        )["UserPool"]["Id"]
        client_id = cognito.create_user_pool_client(
            UserPoolId=pool_id,
            ClientName="api",
            ExplicitAuthFlows=["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
        )["UserPoolClient"]["ClientId"]
        cognito.admin_create_user(
            UserPoolId=pool_id,
            Username="alice@example.com",
            MessageAction="SUPPRESS",
            UserAttributes=[
                {"Name": "email", "Value": "alice@example.com"},
                {"Name": "custom:account_id", "Value": "acct_1"},
            ],
        )
        cognito.admin_set_user_password(
            UserPoolId=pool_id, Username="alice@example.com", Password=PASSWORD, Permanent=True
        )
        yield pool_id, client_id


def claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * 4))
    return decoded


def test_srp_sign_in_prints_the_id_token(
    pool: tuple[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pool_id, client_id = pool
    monkeypatch.setenv("SIGN_IN_PASSWORD", PASSWORD)
    args = ["--user-pool-id", pool_id, "--client-id", client_id, "--username", "alice@example.com"]
    assert main(args) == 0
    token = capsys.readouterr().out.strip()
    assert claims(token)["custom:account_id"] == "acct_1"
    assert claims(token)["token_use"] == "id"


def test_a_refused_sign_in_is_one_line_and_status_1(
    pool: tuple[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pool_id, client_id = pool
    monkeypatch.setenv("SIGN_IN_PASSWORD", PASSWORD)  # moto checks the user, not the SRP proof
    args = ["--user-pool-id", pool_id, "--client-id", client_id, "--username", "bob@example.com"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("sign-in refused: ")
    assert captured.err.count("\n") == 1
