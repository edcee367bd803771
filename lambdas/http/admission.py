"""Who calls and whether their quotas admit them, decided from the raw event before the
resolver parses anything: a refusal (401, 403, 429) never depends on the body, and every
answer to an admitted caller (a 400 or a 404 too) has spent its quota and carries its
headers.

A person or an API key is named by the authorizer's context. People spend their account's
``api`` bucket. An API key must hold the route's scopes and spends its own bucket, then the
``api-keys`` bucket its account's keys share, never the people's: however many keys loop,
the account's people keep their whole quota. An integration key (the
alert routes) comes in ``Authorization`` or as the body's ``routing_key``; it spends its
integration's bucket, then the account's ``alerts`` one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

from incidents.access.models import API_KEY_ID
from incidents.alerts.integrations import KEY_PREFIX, authenticate
from incidents.alerts.models import Integration
from incidents.errors import ForbiddenError, UnauthorizedError
from incidents.feed_tokens import feed_account
from incidents.models import ACCOUNT_ID, USER_ID
from incidents.store import Caller
from lambdas.http.cors import request_header
from lambdas.http.principal import ACCOUNT, PRINCIPAL, SCOPES
from lambdas.http.quotas import admit, quotas
from lambdas.http.statuses import CountedRefusalError
from lambdas.routes import NAME_OF, ROUTE_OF, Route, scopes_of
from lambdas.runtime import store

_ACCOUNT_PATTERN = re.compile(ACCOUNT_ID)
_PRINCIPAL_PATTERN = re.compile(rf"{USER_ID}|{API_KEY_ID}")
BEARER = "bearer "
API_QUOTA = "api"
API_KEYS_QUOTA = "api-keys"
ALERTS_QUOTA = "alerts"


@dataclass(frozen=True)
class Admission:
    """An admitted request: its caller (with the integration it sends as, on the alert
    routes) and its quotas' headers."""

    caller: Caller
    headers: dict[str, str] = field(default_factory=dict)
    integration: Integration | None = None
    scopes: tuple[str, ...] | None = None
    """An API key's scopes (None: a person, an integration or a feed)."""


_ADMITTED: ContextVar[Admission | None] = ContextVar("admitted", default=None)
"""The request being served (a Lambda container serves one at a time; a context variable
keeps threads that call the handler side by side, as tests do, apart)."""


def admitted() -> Admission | None:
    """The admission of the request being served, if it was admitted."""
    return _ADMITTED.get()


def admit_request(event: Mapping[str, Any]) -> Token[Admission | None]:
    """Admit `event`'s caller, kept for the handler until `release`; or raise what refuses
    it (a `DomainError`: 401, 403, 429; or the table's own error). A preflight, a route this
    API does not have, an alert whose body cannot be read and a page's link go on
    unadmitted: the handler answers them (a link's, with HTML pages)."""
    route = ROUTE_OF.get((str(event.get("httpMethod")), str(event.get("resource"))))
    admission = None
    if route is not None and not route.page_link:  # a link's handler admits (`link_pages`)
        admission = (
            _integration(event, route)
            if route.integration_key
            else _feed(event)
            if route.feed_token
            else _person(event, route)
        )
    return _ADMITTED.set(admission)


def release(token: Token[Admission | None]) -> None:
    """Forget the request's admission once it is answered."""
    _ADMITTED.reset(token)


def _person(event: Mapping[str, Any], route: Route) -> Admission:
    """A person or an API key, as the authorizer named it: 401 without valid claims, 429
    over a quota, 403 for an API key without the route's scopes (with the quota's
    headers: the request was counted)."""
    context = (event.get("requestContext") or {}).get("authorizer") or {}
    account, principal = context.get(ACCOUNT), context.get(PRINCIPAL)
    if not (isinstance(account, str) and _ACCOUNT_PATTERN.match(account)):
        raise UnauthorizedError("missing or invalid account claim")
    if not (isinstance(principal, str) and _PRINCIPAL_PATTERN.match(principal)):
        raise UnauthorizedError("missing or invalid user claim")
    scopes = context.get(SCOPES)
    if not isinstance(scopes, str) and not principal.startswith("user_"):
        raise UnauthorizedError("missing or invalid user claim")
    limits = quotas()
    takes = [(API_QUOTA, limits.api)]
    if isinstance(scopes, str):
        takes = [(principal, limits.api_key), (API_KEYS_QUOTA, limits.api_keys)]
    headers = admit(account, takes)
    if isinstance(scopes, str):
        try:
            check_scope(route, scopes.split())
        except ForbiddenError as error:
            raise CountedRefusalError(error, headers) from None
    granted = tuple(scopes.split()) if isinstance(scopes, str) else None
    return Admission(Caller(account_id=account, user_id=principal), headers, scopes=granted)


def lacks(scope: str) -> bool:
    """Whether the request is an API key's without `scope`: what a route shows or sends
    beyond its own subject needs that subject's scope too."""
    admission = _ADMITTED.get()
    return admission is not None and admission.scopes is not None and scope not in admission.scopes


def check_scope(route: Route, scopes: list[str]) -> None:
    """403 for an API key calling a route its scopes do not cover (or one for people)."""
    needed = scopes_of(NAME_OF[route])
    if not needed:
        raise ForbiddenError("API keys cannot call this route; sign in as a person")
    lacking = [scope for scope in needed if scope not in scopes]
    if lacking:
        raise ForbiddenError(f"this API key lacks the scope {' and '.join(lacking)}")


def _integration(event: Mapping[str, Any], route: Route) -> Admission | None:
    """The integration whose key is in ``Authorization`` (or the body's ``routing_key``),
    admitted by its bucket and its account's ``alerts`` one; 401 for a key that is not one,
    or for none at all (None, unadmitted: a body that cannot be read, which the resolver
    refuses naming why)."""
    key = _bearer(event)
    if key is None:  # only then is the body read here (the resolver parses it anyway)
        body = _json_object(event, route)
        if body is None:
            return None
        key = _routing_key(body)
    if key is None:
        raise UnauthorizedError("send the integration key as Authorization: Bearer <key>")
    who, integration = authenticate(store(), key)
    limits = quotas()
    headers = admit(
        who.account_id, [(integration.id, limits.integration), (ALERTS_QUOTA, limits.alerts)]
    )
    return Admission(who, headers, integration)


def _feed(event: Mapping[str, Any]) -> Admission:
    """A calendar app reading a feed: the token in the path, checked first (a point read;
    404 for one that is not the feed's current one, nothing spent), then its account's API
    quota drawn on. The caller is the feed's subject, in the token's account."""
    parameters = event.get("pathParameters") or {}
    subject = str(parameters.get("schedule_id") or parameters.get("user_id"))
    account = feed_account(store(), str(parameters.get("token", "")), subject)
    headers = admit(account, [(API_QUOTA, quotas().api)])
    return Admission(Caller(account_id=account, user_id=subject), headers)


def _bearer(event: Mapping[str, Any]) -> str | None:
    """The key in ``Authorization``: ``Bearer <key>``, or the bare key (an EventBridge
    connection's API key sends the secret as the header's whole value)."""
    header = request_header(event.get("headers"), "Authorization").strip()
    if header.lower().startswith(BEARER):
        return header[len(BEARER) :].strip() or None
    return header if header.startswith(KEY_PREFIX) else None


def _json_object(event: Mapping[str, Any], route: Route) -> dict[str, Any] | None:
    """The body, if it is a JSON object within the route's size (what is not, the resolver
    refuses with the reason)."""
    body = event.get("body") or ""
    if route.max_body is not None and len(body.encode()) > route.max_body:
        return None
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):  # nested past the parser's depth: the resolver's 400
        return None
    return parsed if isinstance(parsed, dict) else None


def _routing_key(body: dict[str, Any]) -> str | None:
    """The body's ``routing_key``, if it has one."""
    key = body.get("routing_key")
    return key if isinstance(key, str) and key else None


def caller() -> Caller:
    """The admitted caller (401 if the request was not admitted)."""
    admission = _ADMITTED.get()
    if admission is None:
        raise UnauthorizedError("missing or invalid identity claims")
    return admission.caller
