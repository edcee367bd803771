"""The cursor key is read from Secrets Manager through Powertools Parameters, with caching."""

from __future__ import annotations

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters

from lambdas import runtime
from local.engines.clients import LOCAL_REGION

pytestmark = pytest.mark.integration


def test_cursor_secret_comes_from_secrets_manager_and_is_cached(
    moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", moto_endpoint)
    secrets = boto3.client("secretsmanager", region_name=LOCAL_REGION, endpoint_url=moto_endpoint)
    arn = secrets.create_secret(Name="cursor-key-test", SecretString="k" * 64)["ARN"]
    monkeypatch.setenv("CURSOR_SECRET_ARN", arn)
    monkeypatch.setenv("CURSOR_SECRET_MAX_AGE", "300")

    assert runtime.cursor_secret() == b"k" * 64
    secrets.put_secret_value(SecretId=arn, SecretString="r" * 64)
    assert runtime.cursor_secret() == b"k" * 64, "served from the Parameters cache"
    parameters.clear_caches()  # type: ignore[no-untyped-call]  # what max_age does after 300 s
    assert runtime.cursor_secret() == b"r" * 64, "a rotated key is picked up once the cache expires"
