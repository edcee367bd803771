"""The local server as a hostile or ordinary HTTP client meets it: gunicorn's parsing
(chunked bodies, one Content-Length, malformed requests answered in JSON), idle
connections closed, one worker's slow request not delaying another's, browser origins,
settings checked before start-up, and SIGTERM or Ctrl-C draining what is in flight."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from local.api.dev_process import DevServerError, dev_process
from local.api.server import IDLE_SECONDS
from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration
BODY = b'{"title": "sent in chunks"}'
TOO_LARGE = "headers_too_large"


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def exchange(port: int, data: bytes, timeout: float = 30) -> tuple[int, dict[str, str], bytes]:
    """Send `data` exactly as given, read until the server closes: status, headers, body."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return int(status_line.split()[1]), headers, body


def request_head(method: str, path: str, token: str, *extra: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: localhost", f"Authorization: {token}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_chunked_create_is_201(local_api: LocalApi) -> None:
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (BODY[:9], BODY[9:]))
    head = request_head(
        "POST",
        "/incidents",
        local_api.token(0, 0),
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
    )
    status, _, body = exchange(port_of(local_api.url), head + chunks + b"0\r\n\r\n")
    assert status == 201, body
    assert json.loads(body)["summary"]["title"] == "sent in chunks"


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"POST /incidents HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\nContent-Length: 0\r\n\r\n",
        b"POST /incidents HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        b"POST /incidents HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"GET /me/incidents\r\n\r\n",
        b"GET /me/incidents HTTP/1.1 extra\r\n\r\n",
        b"GET /me/incidents HTTP/1.1\r\nno colon here\r\n\r\n",
    ],
    ids=[
        "two-lengths",
        "negative-length",
        "length-and-chunked",
        "no-version",
        "bad-line",
        "bad-header",
    ],
)
def test_malformed_requests_are_a_json_400(local_api: LocalApi, request_bytes: bytes) -> None:
    status, headers, body = exchange(port_of(local_api.url), request_bytes)
    assert status == 400, body
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["code"] == "bad_request"


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (b"GET /" + b"a" * 10_300 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 431, "headers_too_large"),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10_300 + b"\r\n\r\n",
            431,
            "headers_too_large",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 101 + b"\r\n",
            431,
            "headers_too_large",
        ),
    ],
    ids=["long-request-line", "long-header", "too-many-headers"],
)
def test_requests_over_the_limits_are_json_errors(
    local_api: LocalApi, request_bytes: bytes, status: int, code: str
) -> None:
    answered, headers, body = exchange(port_of(local_api.url), request_bytes)
    assert answered == status, body
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["code"] == code


def test_a_connection_is_closed_after_its_answer_and_an_idle_one_after_a_while(
    local_api: LocalApi,
) -> None:
    port = port_of(local_api.url)
    head = request_head("GET", "/me/teams", local_api.token(0, 0))
    status, headers, _ = exchange(port, head)  # returns only once the server has closed
    assert (status, headers["connection"]) == (200, "close")
    with socket.create_connection(("127.0.0.1", port), timeout=IDLE_SECONDS + 25) as idle:
        assert idle.recv(1) == b"", "an idle connection is closed by the server"


def test_a_slow_request_in_one_worker_does_not_hold_up_another(local_api: LocalApi) -> None:
    """One client sends its body a byte at a time, holding a worker; a request sent
    meanwhile is answered by another worker before the slow one is done."""
    port, token = port_of(local_api.url), local_api.token(0, 0)
    done: list[str] = []
    started = threading.Event()

    def slow() -> None:
        head = request_head(
            "POST", "/incidents", token, "Content-Type: application/json",
            f"Content-Length: {len(BODY)}",
        )  # fmt: skip
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(head)
            started.set()
            for byte in BODY:
                time.sleep(0.1)
                sock.sendall(bytes([byte]))
            assert sock.recv(12) == b"HTTP/1.1 201"
        done.append("slow")

    thread = threading.Thread(target=slow)
    thread.start()
    assert started.wait(30)
    time.sleep(0.3)  # the slow request is in a worker now
    assert local_api.request("GET", "/me/teams", token)[0] == 200
    done.append("fast")
    thread.join(60)
    assert done == ["fast", "slow"]


@pytest.mark.parametrize("origin", ["http://localhost:5173", "http://127.0.0.1:8080"])
def test_front_end_dev_servers_are_allowed_out_of_the_box(local_api: LocalApi, origin: str) -> None:
    status, headers, _ = exchange(
        port_of(local_api.url),
        request_head("GET", "/me/teams", local_api.token(0, 0), f"Origin: {origin}"),
    )
    assert status == 200
    assert headers["access-control-allow-origin"] == origin
    assert headers["vary"] == "Origin"


@pytest.mark.parametrize(
    "origins", ['["http://localhost:3000/"]', "http://localhost:3000", '["*"]', "[3000]"]
)
def test_a_malformed_cors_setting_stops_start_up_in_one_line(tmp_path: Path, origins: str) -> None:
    with (
        pytest.raises(DevServerError) as failed,
        dev_process(
            tmp_path, {"CORS_ALLOWED_ORIGINS": origins, "DYNAMODB_ENDPOINT": "http://127.0.0.1:9"}
        ),
    ):
        pass
    message = str(failed.value)
    assert "exited with 2" in message
    log = message.split("\n", 1)[1].strip()
    assert log.startswith("make dev: CORS_ALLOWED_ORIGINS"), log
    assert len(log.splitlines()) == 1, log


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_drains_the_request_in_flight(
    tmp_path: Path, dynamodb_endpoint: str, signum: int
) -> None:
    """A request still being sent when the signal comes is answered; then everything stops,
    exit 0, no traceback, no worker left."""
    settings = {"DYNAMODB_ENDPOINT": dynamodb_endpoint, "TABLE_NAME": f"drain-{signum}",
                "DEMO_INCIDENTS": "10", "DEV_CONCURRENCY": "2"}  # fmt: skip
    with dev_process(tmp_path, settings) as running:
        workers = running.workers()
        assert len(workers) == 2
        port, token = port_of(running.url), running.accounts[0]["users"][0]["token"]
        head = request_head(
            "POST", "/incidents", token, "Content-Type: application/json",
            f"Content-Length: {len(BODY)}",
        )  # fmt: skip
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(head + BODY[:5])
            time.sleep(0.5)
            running.process.send_signal(signum)
            late = [late_request(port, token) for _ in range(5)]
            time.sleep(0.5)
            sock.sendall(BODY[5:])
            assert sock.recv(12) == b"HTTP/1.1 201"
        for thread in late:
            thread.join(30)
        code = running.process.wait(timeout=30)
        log = running.log_tail(100_000)
    assert code == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert log.rstrip().endswith("stopped")
    assert "exited with code" not in log, "the engine's JVM is not reaped as a worker"
    assert all(not Path(f"/proc/{pid}").exists() for pid in workers)
    assert all(thread.outcome in ("answered", "refused") for thread in late), [
        thread.outcome for thread in late
    ]


class late_request(threading.Thread):  # noqa: N801 - read as an action
    """A client that connects while the server stops: it must get an answer (503 while the
    front drains) or a refusal, never a reset connection."""

    def __init__(self, port: int, token: str) -> None:
        super().__init__()
        self.port, self.token, self.outcome = port, token, "pending"
        self.start()

    def run(self) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=20) as sock:
                sock.sendall(request_head("GET", "/me/teams", self.token))
                self.outcome = "answered" if sock.recv(9) == b"HTTP/1.1 " else "empty"
        except ConnectionRefusedError:
            self.outcome = "refused"
        except OSError as error:
            self.outcome = f"{type(error).__name__}"


@pytest.mark.parametrize("second", ["Authorization", "authorization", "AUTHORIZATION"])
def test_two_authorization_headers_are_a_401(local_api: LocalApi, second: str) -> None:
    """Two tokens, even two valid ones: which caller is meant? (The last one won before.)"""
    mine, theirs = local_api.token(0, 0), local_api.token(1, 0)
    head = request_head("GET", "/me/teams", mine, f"{second}: {theirs}")
    status, _, body = exchange(port_of(local_api.url), head)
    assert status == 401, body
    assert json.loads(body)["code"] == "unauthorized"


def test_a_body_that_is_not_utf8_is_invalid_json(local_api: LocalApi) -> None:
    body = b'{"title": "\xff\xfe"}'
    head = request_head(
        "POST", "/incidents", local_api.token(0, 0), "Content-Type: application/json",
        f"Content-Length: {len(body)}",
    )  # fmt: skip
    status, _, answer = exchange(port_of(local_api.url), head + body)
    assert status == 400, answer
    assert json.loads(answer)["code"] == "invalid_json"
