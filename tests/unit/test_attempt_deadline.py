"""One attempt, one deadline (issue 37, point 1): connect, TLS, headers and body together
within the attempt's timeout. An endpoint that trickles its answer (one byte at a time,
each within the socket's timeout) held an attempt for 44 s under a 10 s "total" timeout
and was logged as succeeded; now it is cut at the deadline and logged `timed out`."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest

from incidents.events_out.endpoints import EndpointPolicy, post

MAKE_DEV = EndpointPolicy(allow_loopback=True)
DEADLINE = 1.5


@contextmanager
def endpoint(answer: bytes, pause: float, at_once: bytes = b"") -> Iterator[int]:
    """A local endpoint that reads the request, sends `at_once`, then `answer` a byte every
    `pause` seconds and holds the connection (bounded: 200 bytes, 10 s, stopped on exit)."""
    stop = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with suppress(OSError):
            client, _ = server.accept()
            with client:
                client.settimeout(10)
                client.recv(65536)
                client.sendall(at_once)
                for byte in answer[:200]:
                    if stop.wait(pause):
                        return
                    client.sendall(bytes([byte]))
                stop.wait(10)  # then holds the connection, silent

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        server.close()
        thread.join(5)


HEADERS = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 30
BODY = b"HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\n" + b"a" * 30
STATUS = b"HTTP/1.1 200 OK\r\n"
"""Sent at once, then header bytes that never make a header: cut at the deadline, the
status line was taken for a 200 (bench.endpoint_isolation's trickling endpoint found it)."""


@pytest.mark.timing
@pytest.mark.parametrize(
    ("at_once", "answer"),
    [(b"", HEADERS), (b"", BODY), (STATUS, b"X" * 30)],
    ids=["headers", "body", "status at once"],
)
def test_a_trickling_endpoint_is_cut_at_the_deadline(at_once: bytes, answer: bytes) -> None:
    with endpoint(answer, pause=0.2, at_once=at_once) as port:
        began = time.monotonic()
        outcome = post(f"http://127.0.0.1:{port}/hook", b"{}", {}, MAKE_DEV, timeout=DEADLINE)
        took = time.monotonic() - began
    assert (outcome.status, outcome.error) == (None, "timed out")
    assert DEADLINE <= took < DEADLINE + 0.5, took


@pytest.mark.timing
def test_a_tls_handshake_that_never_ends_is_cut_at_the_deadline() -> None:
    """An endpoint that accepts and says nothing: the TLS handshake waits for it."""
    with endpoint(b"", pause=0.2) as port:
        began = time.monotonic()
        outcome = post(f"https://127.0.0.1:{port}/hook", b"{}", {}, MAKE_DEV, timeout=DEADLINE)
        took = time.monotonic() - began
    assert (outcome.status, outcome.error) == (None, "timed out")
    assert took < DEADLINE + 0.5, took


def test_a_prompt_answer_is_its_status() -> None:
    with endpoint(b"HTTP/1.1 204 No Content\r\n\r\n", pause=0.0) as port:
        outcome = post(f"http://127.0.0.1:{port}/hook", b"{}", {}, MAKE_DEV, timeout=DEADLINE)
    assert (outcome.status, outcome.error) == (204, None)


@pytest.mark.parametrize("host", ["a" * 64 + ".example.com", "a..example.com"])
def test_a_host_idna_cannot_encode_is_a_failed_attempt(host: str) -> None:
    """It raised `UnicodeError` outside the handled errors: no log, a dead letter."""
    outcome = post(f"https://{host}/hook", b"{}", {}, EndpointPolicy(), timeout=DEADLINE)
    assert outcome.status is None
    assert outcome.error


@pytest.mark.parametrize(
    ("answer", "wait"),
    [
        (b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 120\r\nContent-Length: 0\r\n\r\n", 120),
        (
            b"HTTP/1.1 503 Unavailable\r\nRetry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n"
            b"Content-Length: 0\r\n\r\n",
            0,
        ),
        (b"HTTP/1.1 500 Error\r\nRetry-After: 120\r\nContent-Length: 0\r\n\r\n", None),
    ],
    ids=["seconds", "a-past-date", "not-asked"],
)
def test_retry_after_is_read_where_it_asks_to_wait(answer: bytes, wait: int | None) -> None:
    with endpoint(answer, pause=0.0) as port:
        outcome = post(f"http://127.0.0.1:{port}/hook", b"{}", {}, MAKE_DEV, timeout=DEADLINE)
    assert outcome.retry_after == wait
