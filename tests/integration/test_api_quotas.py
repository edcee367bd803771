"""Quotas per caller and honest headers, through the real authorizer and handlers: an API key
spends its own bucket, then the one its account's keys share, never the people's, so
looping keys never cost the account's people a 429; every answer to an admitted caller (a
4xx too) is counted and says so; the scope is checked before the body is read; and ``t``
and ``Retry-After`` agree."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from dynashard import RateLimits, Table
from incidents.store import Caller, new_id
from incidents.table import TABLE_SCHEMA
from lambdas import runtime
from lambdas.http import admission, quotas
from local.api.gateway import LocalGateway
from tests.helpers.api_harness import Api

pytestmark = pytest.mark.integration
QUOTA_HEADERS = ("RateLimit-Policy", "RateLimit")


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


@pytest.fixture
def gateway(api: Api) -> LocalGateway:
    return LocalGateway(api.handlers, {})


@pytest.fixture
def still(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handlers' quotas on a clock that stands still: nothing refills during the test,
    however slowly a loaded machine serves its requests (what it checks is who is counted,
    not the pace)."""
    now = time.time()
    limiter = RateLimits(
        Table(runtime.dynamodb(), runtime.table_name(), TABLE_SCHEMA), clock=lambda: now
    )
    monkeypatch.setattr(quotas, "rate_limits", lambda: limiter)


def send(
    gateway: LocalGateway,
    key: str,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
) -> tuple[int, dict[str, str], Any]:
    """One request as a machine sends it with `key`: status, headers, parsed body."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": content_type}
    raw = (body if isinstance(body, str) else json.dumps(body)).encode() if body else b""
    status, answer, payload = gateway.respond(method, path, headers, raw)
    return status, answer, json.loads(payload) if payload else None


def new_key(api: Api, who: Caller, *scopes: str) -> str:
    reply = api.call("create_api_key", who, body={"name": "loop", "scopes": list(scopes)})
    assert reply.status == 201, reply.body
    return str(reply.body["key"])


def quota_fields(headers: dict[str, str], policy: str) -> dict[str, int]:
    """What the answer says of `policy`: its ``r`` (what is left) and ``t`` (the wait)."""
    for item in headers["RateLimit"].split(", "):
        name, *params = item.split(";")
        if name == f'"{policy}"':
            return {key: int(value) for key, value in (param.split("=") for param in params)}
    raise AssertionError(f"{policy} is not in {headers['RateLimit']}")


def remaining(headers: dict[str, str], policy: str) -> int:
    """What the answer says is left of `policy` (its ``r``)."""
    return quota_fields(headers, policy)["r"]


@pytest.mark.usefixtures("still")
def test_a_looping_key_is_stopped_by_its_own_bucket_and_people_never_see_it(
    api: Api, alice: Caller, gateway: LocalGateway, set_quotas: Callable[..., None]
) -> None:
    set_quotas(API_REQUESTS_PER_MINUTE=20, API_KEY_QUOTA_PERCENT=50)
    key = new_key(api, alice, "incidents:read")  # the account's first request
    answers = [send(gateway, key, "GET", "/incidents") for _ in range(30)]  # back to back
    statuses = [status for status, _, _ in answers]
    assert statuses == [200] * 10 + [429] * 20, "its own bucket: half the account's 20"
    refused = next(body for status, _, body in answers if status == 429)
    assert refused["message"].startswith('rate limit "api-key": 10 requests a minute'), refused
    admitted = next(headers for status, headers, _ in answers if status == 200)
    assert admitted["RateLimit-Policy"] == '"api-key";q=10;w=60, "api-keys";q=20;w=60'
    people = [api.call("account_incidents", alice, query={"state": ["OPEN"]}) for _ in range(20)]
    assert [reply.status for reply in people] == [200] * 19 + [429], (
        "the key took nothing from the people's 20 (the key's creation took one)"
    )
    assert people[-1].body["message"].startswith('rate limit "api": 20 requests a minute')
    assert people[0].headers["RateLimit-Policy"] == '"api";q=20;w=60', "a person's: one bucket"


@pytest.mark.usefixtures("still")
def test_keys_looping_together_never_take_the_peoples_quota(
    api: Api, alice: Caller, gateway: LocalGateway, set_quotas: Callable[..., None]
) -> None:
    set_quotas(API_REQUESTS_PER_MINUTE=40, API_KEY_QUOTA_PERCENT=50)
    keys = [new_key(api, alice, "incidents:read") for _ in range(3)]
    looped = [send(gateway, key, "GET", "/incidents") for _ in range(30) for key in keys]
    assert [s for s, _, _ in looped].count(200) == 40, "the keys share a bucket of the 40"
    first_refusal = next(body for status, _, body in looped if status == 429)
    assert first_refusal["message"].startswith('rate limit "api-keys": 40 requests a minute')
    people = [api.call("account_incidents", alice, query={"state": ["OPEN"]}) for _ in range(30)]
    assert [reply.status for reply in people] == [200] * 30, "the keys' loops cost people nothing"


@pytest.mark.usefixtures("still")
def test_every_answer_to_an_admitted_caller_is_counted_and_says_so(
    api: Api, alice: Caller, gateway: LocalGateway, set_quotas: Callable[..., None]
) -> None:
    set_quotas(API_REQUESTS_PER_MINUTE=20)
    key = new_key(api, alice, "incidents:read")
    answers = [
        send(gateway, key, "GET", "/incidents?state=OPEN&limit=1000"),  # 400
        send(gateway, key, "GET", f"/incidents/{new_id('inc')}"),  # 404
        send(gateway, key, "POST", "/teams", {"name": "x"}),  # 403: no teams:write
        send(gateway, key, "GET", "/incidents?state=OPEN"),  # 200
    ]
    assert [status for status, _, _ in answers] == [400, 404, 403, 200]
    left = [remaining(headers, "api-key") for _, headers, _ in answers]
    assert left == [9, 8, 7, 6], "each answer counted"
    person = api.call(
        "create_team", alice, raw_body="name=x", headers={"Content-Type": "text/plain"}
    )
    assert person.status == 415
    assert all(h in person.headers for h in QUOTA_HEADERS)
    status, headers, _ = gateway.respond("GET", "/incidents", {}, b"")
    assert status == 401
    assert not any(h in headers for h in QUOTA_HEADERS), "no caller: no quota"
    stranger = api.call("account_incidents", None)
    assert stranger.status == 401
    assert "RateLimit" not in stranger.headers


def test_the_scope_is_checked_before_the_body_is_read(
    api: Api, alice: Caller, gateway: LocalGateway
) -> None:
    reader = new_key(api, alice, "incidents:read")
    for body in ({"title": 7}, "{not json", None):
        status, headers, answer = send(gateway, reader, "POST", "/incidents", body)
        assert (status, answer["code"]) == (403, "forbidden"), (body, answer)
        assert "RateLimit" in headers, "a refusal by scope is counted too"


@pytest.mark.usefixtures("still")
def test_retry_after_is_the_refusing_quotas_t(
    api: Api, alice: Caller, set_quotas: Callable[..., None]
) -> None:
    set_quotas(API_REQUESTS_PER_MINUTE=3)
    replies = [api.call("account_incidents", alice, query={"state": ["OPEN"]}) for _ in range(4)]
    assert [reply.status for reply in replies] == [200, 200, 200, 429]
    refused = replies[-1].headers
    t = int(refused["RateLimit"].rsplit("t=", 1)[1])
    assert refused["RateLimit"].startswith('"api";r=0;')
    assert 1 <= t <= 20, refused
    assert refused["Retry-After"] == str(t), refused
    assert int(replies[0].headers["RateLimit"].rsplit("t=", 1)[1]) <= 20, (
        "t is when more is available (one request's interval), not when the quota is whole"
    )


@pytest.mark.usefixtures("still")
def test_retry_after_is_the_longest_wait_of_the_quotas_a_retry_would_meet(
    api: Api, alice: Caller, set_quotas: Callable[..., None]
) -> None:
    """The account's ``alerts`` quota refuses while the key's own ``integration`` quota,
    spent by this very alert, has nothing left either: a retry after the refusing quota's
    wait alone would be refused by the other."""
    set_quotas(INTEGRATION_ALERTS_PER_MINUTE=1, ALERTS_PER_MINUTE=3)
    keys = [
        api.call("create_integration", alice, body={"name": f"source {n}"}).body["key"]
        for n in range(4)
    ]
    payload = {"summary": "disk full", "source": "db-1", "severity": "critical"}
    replies = [
        api.call("send_alert", None, body={"routing_key": key, "event_action": "trigger",
                                           "payload": payload})
        for key in keys
    ]  # fmt: skip
    assert [reply.status for reply in replies] == [202, 202, 202, 429]
    refused = replies[-1]
    assert refused.body["message"].startswith('rate limit "alerts"'), refused.body
    alerts, integration = (quota_fields(refused.headers, q) for q in ("alerts", "integration"))
    assert integration["r"] == 0, refused.headers
    assert integration["t"] > alerts["t"], refused.headers
    assert refused.headers["Retry-After"] == str(integration["t"]), refused.headers


@pytest.mark.usefixtures("still")
def test_an_integration_key_s_bad_alert_is_counted_and_says_so(
    api: Api, alice: Caller, gateway: LocalGateway, set_quotas: Callable[..., None]
) -> None:
    set_quotas(INTEGRATION_ALERTS_PER_MINUTE=10)
    created = api.call("create_integration", alice, body={"name": "grafana"}).body
    alert = {"routing_key": created["key"], "event_action": "trigger", "payload": {}}
    reply = api.call("send_alert", None, body=alert)
    assert reply.status == 400
    assert reply.headers["RateLimit-Policy"].startswith('"integration"')
    big = {"routing_key": created["key"], "blob": "x" * 600_000}
    status, headers, answer = send(gateway, created["key"], "POST", "/v2/enqueue", big)
    assert (status, answer["code"]) == (413, "payload_too_large")
    assert (remaining(reply.headers, "integration"), remaining(headers, "integration")) == (9, 8)


def test_an_alert_with_no_key_anywhere_is_a_401_whatever_its_body_lacks(api: Api) -> None:
    reply = api.call("send_alert", None, body={"event_action": "trigger", "payload": {}})
    assert (reply.status, reply.body["code"]) == (401, "unauthorized")
    unreadable = api.call("send_alert", None, raw_body='{"routing_key": ')
    assert (unreadable.status, unreadable.body["code"]) == (400, "invalid_json")


def test_a_body_nested_past_the_parser_is_a_400_not_a_crash(api: Api) -> None:
    """Admission reads an alert's ``routing_key`` before the resolver: a body nested deeper
    than Python's parser goes is the resolver's 400 to answer, not an escaped error."""
    deep = '{"routing_key": "x", "a": ' + "[" * 5000 + "]" * 5000 + "}"
    reply = api.call("send_alert", None, raw_body=deep)
    assert reply.status == 400, reply.body
    assert reply.body["code"] in ("invalid_json", "validation_error")


@pytest.mark.parametrize(
    ("failure", "status", "code"),
    [
        (ClientError({"Error": {"Code": "ThrottlingException"}}, "UpdateItem"), 429, "throttled"),
        (ReadTimeoutError(endpoint_url="http://dynamodb"), 503, "unavailable"),
        (RuntimeError("a bug"), 500, "internal_error"),
    ],
)
def test_a_table_failing_while_admitting_is_answered_as_anywhere_else(
    api: Api,
    alice: Caller,
    monkeypatch: pytest.MonkeyPatch,
    failure: Exception,
    status: int,
    code: str,
) -> None:
    def failing(*_: object) -> dict[str, str]:
        raise failure

    monkeypatch.setattr(admission, "admit", failing)
    reply = api.call("account_incidents", alice, query={"state": ["OPEN"]})
    assert (reply.status, reply.body["code"]) == (status, code)
    if status != 500:
        assert int(reply.headers["Retry-After"]) >= 1
    assert admission.admitted() is None, "nothing of a request outlives it"
