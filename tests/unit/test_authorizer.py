"""The API's authorizer on people's tokens: a Cognito ID token of the pool's app client,
signed by one of the pool's keys, becomes the caller's context; anything else is a 401.
The keys are a test key set (the deployed verifier fetches the pool's published ones)."""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from incidents.errors import UnauthorizedError
from incidents.store import new_id
from lambdas.authorizer import allow_stage, cognito_verifier, credential, handler, identify

POOL, CLIENT = "eu-west-1_TestPool1", "test-app-client"
ISSUER = f"https://cognito-idp.eu-west-1.amazonaws.com/{POOL}"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ACCOUNT, USER = new_id("acct"), new_id("user")


def _jwks() -> dict[str, Any]:
    public = json.loads(RSAAlgorithm.to_jwk(KEY.public_key()))
    return {"keys": [{**public, "kid": "pool-key", "alg": "RS256", "use": "sig"}]}


VERIFIER = cognito_verifier(POOL, CLIENT, _jwks())


def token(signer: rsa.RSAPrivateKey = KEY, **changes: Any) -> str:
    """An ID token as Cognito issues it, with `changes` (None removes a claim)."""
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "aud": CLIENT,
        "token_use": "id",
        "sub": "5b1c-test",
        "iat": now,
        "exp": now + 3600,
        "custom:account_id": ACCOUNT,
        "custom:user_id": USER,
        **changes,
    }
    claims = {name: value for name, value in claims.items() if value is not None}
    return jwt.encode(claims, signer, algorithm="RS256", headers={"kid": "pool-key"})


def test_a_pool_id_token_becomes_the_caller_s_context() -> None:
    context = identify(token(), lambda: VERIFIER)
    assert context == {"principalId": USER, "account_id": ACCOUNT, "user_id": USER}
    assert "scopes" not in context, "a person may call every route"


@pytest.mark.parametrize(
    "forged",
    [
        pytest.param({"signer": OTHER_KEY}, id="signed by another key"),
        pytest.param({"aud": "another-client"}, id="another app client"),
        pytest.param({"iss": "https://cognito-idp.eu-west-1.amazonaws.com/x"}, id="another pool"),
        pytest.param({"token_use": "access"}, id="an access token"),
        pytest.param({"exp": int(time.time()) - 3600}, id="expired"),
        pytest.param({"custom:account_id": None}, id="no account"),
        pytest.param({"custom:account_id": "acct_x"}, id="a malformed account"),
        pytest.param({"custom:user_id": ACCOUNT}, id="an account id as the user"),
    ],
)
def test_any_other_token_is_refused(forged: dict[str, Any]) -> None:
    with pytest.raises(UnauthorizedError):
        identify(token(**forged), lambda: VERIFIER)


def test_a_token_with_no_signature_is_refused() -> None:
    unsigned = jwt.encode({"iss": ISSUER, "aud": CLIENT, "token_use": "id"}, "", "none")
    with pytest.raises(UnauthorizedError):
        identify(unsigned, lambda: VERIFIER)


@pytest.mark.parametrize(
    ("header", "expected"),
    [("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("abc", "abc"), ("", "")],
)
def test_the_credential_is_the_header_with_or_without_bearer(header: str, expected: str) -> None:
    assert credential({"authorization": header}) == expected


def test_an_allow_covers_the_whole_stage_so_the_cached_answer_serves_every_route() -> None:
    arn = "arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/incidents"
    context = {"principalId": USER, "account_id": ACCOUNT, "user_id": USER}
    allowed = allow_stage(arn, context)
    (statement,) = allowed["policyDocument"]["Statement"]
    assert statement == {
        "Action": "execute-api:Invoke",
        "Effect": "Allow",
        "Resource": "arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*",
    }
    assert allowed["principalId"] == USER
    assert allowed["context"] == {"account_id": ACCOUNT, "user_id": USER}


def test_a_refusal_is_the_unauthorized_error_api_gateway_answers_401_for() -> None:
    event = {"methodArn": "arn:aws:execute-api:r:1:a/s/GET/x", "headers": {}}
    with pytest.raises(PermissionError) as refused:
        handler(event)
    assert str(refused.value) == "Unauthorized", "API Gateway matches this exact message"
