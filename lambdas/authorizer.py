"""The API's REQUEST authorizer, in front of every route but ``POST /alerts``.

``Authorization`` holds a person's Cognito ID token (``Bearer`` optional) or an account's
API key (``mk_…``). A token is verified against the user pool's signing keys (Powertools'
JWT verifier: signature, issuer, audience, expiry, ``token_use`` id); a key is one point
read (`incidents.access.api_keys`). Either becomes the context every handler reads its
caller from (`lambdas.http.principal`), with an Allow for the whole stage: API Gateway caches
the answer per header value for the stage's TTL (60 s), across routes, so what a key may
call is checked by the handler against its scopes. Anything else is API Gateway's 401.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.utilities.auth_alpha.jwt.verifier import JWTVerifier
from aws_lambda_powertools.utilities.typing import LambdaContext

from incidents.access import api_keys
from incidents.errors import UnauthorizedError
from incidents.models import ACCOUNT_ID, USER_ID
from incidents.store import Caller
from lambdas.http.cors import request_header
from lambdas.http.principal import context_of
from lambdas.runtime import logger, store_without_cursors
from lambdas.settings import USER_POOL_CLIENT_ID, USER_POOL_ID

ACCOUNT_CLAIM = "custom:account_id"
USER_CLAIM = "custom:user_id"
BEARER = "bearer "
ACCOUNT_PATTERN, USER_PATTERN = re.compile(ACCOUNT_ID), re.compile(USER_ID)


def cognito_verifier(
    user_pool_id: str, client_id: str, jwks: dict[str, Any] | None = None
) -> JWTVerifier:
    """A verifier of the pool's ID tokens for the app client (`jwks`: fixed keys, for tests;
    otherwise the pool's published keys, fetched and refreshed by Powertools)."""
    region = user_pool_id.split("_", 1)[0]
    issuer = f"https://cognito-idp.{region}.amazonaws.com/{user_pool_id}"
    return JWTVerifier(
        issuer=issuer,
        audience=client_id,
        algorithms=["RS256"],
        **({"jwks": jwks} if jwks else {"jwks_uri": f"{issuer}/.well-known/jwks.json"}),
        expected_claims={"token_use": "id"},
        required_claims=[ACCOUNT_CLAIM, USER_CLAIM],
    )


@functools.cache
def verifier() -> JWTVerifier:
    """The container's verifier of the stage's user pool."""
    return cognito_verifier(os.environ[USER_POOL_ID], os.environ[USER_POOL_CLIENT_ID])


def credential(headers: Mapping[str, str] | None) -> str:
    """The token or key in ``Authorization`` (``Bearer`` optional)."""
    value = request_header(headers, "Authorization").strip()
    return value[len(BEARER) :].strip() if value.lower().startswith(BEARER) else value


def identify(token: str, users: Callable[[], JWTVerifier] = verifier) -> dict[str, str]:
    """The context of `token`, or `UnauthorizedError` (`users`: the verifier of people's
    tokens, built only when one comes)."""
    if not token:
        raise UnauthorizedError("no credential")
    if token.startswith(api_keys.KEY_PREFIX):
        who, key = api_keys.authenticate(store_without_cursors(), token)
        return context_of(who, key.scopes)
    verifying = users()  # outside the try: a misconfigured stage is an error, not a 401
    try:
        claims = verifying.verify(token)
    except Exception as error:  # Powertools' errors say why; the caller learns nothing
        logger.info("token refused", extra={"reason": type(error).__name__})
        raise UnauthorizedError("invalid token") from error
    who = Caller(account_id=str(claims[ACCOUNT_CLAIM]), user_id=str(claims[USER_CLAIM]))
    if not (ACCOUNT_PATTERN.match(who.account_id) and USER_PATTERN.match(who.user_id)):
        raise UnauthorizedError("the token's account or user claim is malformed")
    return context_of(who)


def allow_stage(method_arn: str, context: dict[str, str]) -> dict[str, Any]:
    """An Allow for every route of the stage `method_arn` names (the cached answer serves
    the caller's next requests on any route)."""
    api, stage = method_arn.split("/")[:2]
    return {
        "principalId": context["principalId"],
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": f"{api}/{stage}/*"}
            ],
        },
        "context": {k: v for k, v in context.items() if k != "principalId"},
    }


def handler(event: dict[str, Any], _: LambdaContext | None = None) -> dict[str, Any]:
    """API Gateway's REQUEST authorizer: an Allow with the caller's context, or 401
    (raising ``Unauthorized`` is how a Lambda authorizer says so)."""
    try:
        context = identify(credential(event.get("headers")))
    except UnauthorizedError as error:
        raise PermissionError("Unauthorized") from error  # API Gateway: 401
    return allow_stage(str(event["methodArn"]), context)
