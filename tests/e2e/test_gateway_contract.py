"""The local gateway over real HTTP: bodiless 204s on keep-alive connections, one event per
container under concurrent mixed-tenant load, and cursors as they arrive in a URL."""

from __future__ import annotations

import http.client
import json
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration
THREADS, REQUESTS = 32, 500


def connection(api: LocalApi) -> http.client.HTTPConnection:
    url = urlsplit(api.url)
    return http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)


def exchange(
    conn: http.client.HTTPConnection, method: str, path: str, token: str, body: Any = None
) -> tuple[int, bytes]:
    """One request on an open (keep-alive) connection."""
    payload = json.dumps(body) if body is not None else None
    headers = {"Authorization": token, "Content-Type": "application/json"}
    conn.request(method, path, body=payload, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def test_a_204_leaves_a_keep_alive_connection_usable(local_api: LocalApi) -> None:
    token = local_api.token(0, 0)
    status, created = local_api.request("POST", "/teams", token, {"name": "keep-alive"})
    assert status == 201
    team, member = created["id"], local_api.user_id(0, 1)
    assert local_api.request("POST", f"/teams/{team}/members", token, {"user_id": member})[0] == 201
    conn = connection(local_api)
    try:
        status, body = exchange(conn, "DELETE", f"/teams/{team}/members/{member}", token)
        assert (status, body) == (204, b"")
        status, body = exchange(conn, "GET", "/me/teams", token)  # same connection
        assert status == 200
        assert team in [t["id"] for t in json.loads(body)["items"]]
    finally:
        conn.close()


def test_concurrent_mixed_tenant_requests_each_get_their_own_answer(local_api: LocalApi) -> None:
    """Before, one shared resolver answered POST /teams with 200 and GET /me/teams with 201."""
    callers = [(a, u) for a in range(2) for u in range(3)]
    rng = random.Random(5)
    plan = [(rng.choice(callers), rng.random() < 0.5, n) for n in range(REQUESTS)]

    def one(step: tuple[tuple[int, int], bool, int]) -> str | None:
        (account, user), create, n = step
        token, user_id = local_api.token(account, user), local_api.user_id(account, user)
        if create:
            status, body = local_api.request("POST", "/teams", token, {"name": f"c{n}"})
            if status != 201 or body["created_by"] != user_id or body["name"] != f"c{n}":
                return f"POST /teams as {user_id}: {status} {body}"
            return None
        status, body = local_api.request("GET", "/me/teams", token)
        account_users = {u["user_id"] for u in local_api.accounts[account]["users"]}
        foreign = [t for t in body.get("items", []) if t["created_by"] not in account_users]
        if status != 200 or foreign:
            return f"GET /me/teams as {user_id}: {status}, not theirs: {foreign[:2]}"
        return None

    with ThreadPoolExecutor(THREADS) as pool:
        problems = [p for p in pool.map(one, plan) if p]
    assert problems == [], f"{len(problems)} of {REQUESTS}: {problems[:3]}"


@pytest.mark.parametrize("mangle", ["{}!!!", "%20{}", "{}%0A", "{}====", ""])
def test_cursor_variants_in_the_url_are_invalid_cursor(local_api: LocalApi, mangle: str) -> None:
    token = local_api.token(0, 0)
    status, page = local_api.request("GET", "/incidents?state=CLOSED&limit=2", token)
    assert status == 200
    cursor = quote(page["next_cursor"], safe="")
    query = mangle.format(cursor) if mangle else ""
    status, body = local_api.request(
        "GET", f"/incidents?state=CLOSED&limit=2&cursor={query}", token
    )
    assert (status, body["code"]) == (400, "invalid_cursor")


def raw(
    api: LocalApi, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one request sent exactly as given."""
    conn = connection(api)
    try:
        conn.request(method, path, body=body or None, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


ORIGIN = "http://localhost:3000"  # the dev stage's browser origin in cdk.json


def preflight(local_api: LocalApi, path: str) -> dict[str, str]:
    """A browser's preflight for a GET of `path` from `ORIGIN`: passed, its headers."""
    status, headers, _ = raw(
        local_api, "OPTIONS", path, {"Origin": ORIGIN, "Access-Control-Request-Method": "GET"}
    )
    assert status == 204
    assert headers["Access-Control-Allow-Origin"] == ORIGIN
    return headers


def test_cors_preflight_and_headers_on_success_handler_error_and_gateway_error(
    local_api: LocalApi,
) -> None:
    token = local_api.token(0, 0)
    headers = preflight(local_api, "/me/incidents")
    assert {"Idempotency-Key", "If-Match", "If-None-Match"} <= set(
        headers["Access-Control-Allow-Headers"].split(",")
    )
    assert "GET" in headers["Access-Control-Allow-Methods"]
    assert headers["Vary"] == "Origin"
    for path, auth, expected in [
        ("/me/incidents", token, 200),  # success, from the handler
        ("/incidents/inc_2J9dTn4Qb1ZkN0aH7cV3mXyPqLs", token, 404),  # handler error
        ("/me/incidents", "dev-not-a-token", 401),  # the gateway's own error
        ("/no/such/route", token, 404),  # the gateway's own 404
        ("/openapi.json", "", 200),  # the gateway's own documents
        ("/docs", "", 200),
    ]:
        status, headers, _ = raw(local_api, "GET", path, {"Origin": ORIGIN, "Authorization": auth})
        assert status == expected
        assert headers.get("Access-Control-Allow-Origin") == ORIGIN, (path, status)
        varies = headers.get("Vary", "").split(", ")
        assert "Origin" in varies, (path, status)
        assert len(varies) == len(set(varies)), (path, headers["Vary"])
        exposed = set(headers["Access-Control-Expose-Headers"].split(","))
        assert {"ETag", "Location", "Retry-After"} <= exposed, (path, status)
        assert "Access-Control-Allow-Headers" not in headers, "only a preflight says that"
    status, headers, _ = raw(
        local_api,
        "GET",
        "/me/incidents",
        {"Origin": "https://evil.example", "Authorization": token},
    )
    assert (status, headers.get("Access-Control-Allow-Origin")) == (200, None)
    assert headers.get("Vary") == "Origin"


def test_a_preflight_to_an_unknown_route_lets_the_browser_read_the_json_404(
    local_api: LocalApi,
) -> None:
    """Refusing the preflight would show the page a network error instead of the 404."""
    headers = preflight(local_api, "/incidents/by-number/7/nothing")
    assert "GET" in headers["Access-Control-Allow-Methods"].split(",")
    token = local_api.token(0, 0)
    status, headers, body = raw(
        local_api,
        "GET",
        "/incidents/by-number/7/nothing",
        {"Origin": ORIGIN, "Authorization": token},
    )
    assert (status, json.loads(body)["code"]) == (404, "not_found")
    assert headers["Access-Control-Allow-Origin"] == ORIGIN


@pytest.mark.parametrize("method", ["HEAD", "TRACE", "CONNECT", "PROPFIND"])
def test_methods_without_a_route_are_json_404_not_501(local_api: LocalApi, method: str) -> None:
    status, headers, body = raw(local_api, method, "/me/incidents", {})
    assert status == 404
    assert headers["Content-Type"] == "application/json"
    if method != "HEAD":
        assert json.loads(body)["code"] == "not_found"


def test_bodies_above_the_limits_are_413(local_api: LocalApi) -> None:
    token = {"Authorization": local_api.token(0, 0), "Content-Type": "application/json"}
    seven_mb = b'{"title": "' + b"x" * (7 * 1024 * 1024) + b'"}'
    status, _, body = raw(local_api, "POST", "/incidents", token, seven_mb)
    assert (status, json.loads(body)["code"]) == (413, "payload_too_large")
    conn = connection(local_api)  # declared above 10 MB: refused before reading it
    try:
        conn.putrequest("POST", "/incidents")
        for name, value in {**token, "Content-Length": str(11 * 1024 * 1024)}.items():
            conn.putheader(name, value)
        conn.endheaders()
        response = conn.getresponse()
        assert (response.status, json.loads(response.read())["code"]) == (413, "payload_too_large")
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/plain", b'{"title": "t"}', (415, "unsupported_media_type")),
        ("application/xml", b"<title>t</title>", (415, "unsupported_media_type")),
        ("application/x-www-form-urlencoded", b"title=t", (415, "unsupported_media_type")),
        ("multipart/form-data; boundary=x", b"--x--", (415, "unsupported_media_type")),
        ("multipart/form-data", b'{"title": "t"}', (415, "unsupported_media_type")),
        ("application/json; charset=utf-8", b'{"title": "t"}', (201, None)),
        ("application/json", b'{"title": "\xff\xfe"}', (400, "invalid_json")),  # not UTF-8
        (
            "application/json",
            b'{"title": ' + b"[" * 5000 + b"]" * 5000 + b"}",
            (400, "invalid_json"),
        ),
    ],
)
def test_content_the_api_cannot_take_is_a_4xx(
    local_api: LocalApi, content_type: str, body: bytes, expected: tuple[int, str | None]
) -> None:
    headers = {"Authorization": local_api.token(0, 0), "Content-Type": content_type}
    status, _, answer = raw(local_api, "POST", "/incidents", headers, body)
    code = json.loads(answer).get("code") if status >= 400 else None
    assert (status, code) == expected, answer[:300]
