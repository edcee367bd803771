"""Where deliveries may go (SSRF): checked on registration and again, by resolving, at every
delivery; the request connects to the address that was checked."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from incidents.events_out.endpoints import EndpointPolicy, UnsafeUrlError, post

DEPLOYED = EndpointPolicy()
MAKE_DEV = EndpointPolicy(allow_loopback=True)


def resolving(monkeypatch: pytest.MonkeyPatch, *addresses: str) -> None:
    def fake(host: str, port: int, **_: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    monkeypatch.setattr(socket, "getaddrinfo", fake)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fd00:ec2::254",
        "::ffff:10.0.0.1",
        "64:ff9b::a00:1",
        "224.0.0.1",
    ],
)
def test_a_name_resolving_to_a_private_address_is_refused_at_delivery(
    monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    resolving(monkeypatch, address)
    with pytest.raises(UnsafeUrlError):
        DEPLOYED.resolve("hooks.example.com", 443)
    outcome = post("https://hooks.example.com/x", b"{}", {}, DEPLOYED)
    assert (outcome.status, outcome.succeeded) == (None, False)
    assert str(outcome.error).startswith("refused:")


def test_one_private_answer_among_public_ones_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    resolving(monkeypatch, "93.184.216.34", "10.0.0.1")
    with pytest.raises(UnsafeUrlError):
        DEPLOYED.resolve("hooks.example.com", 443)


def test_a_public_name_resolves_to_the_address_connected_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolving(monkeypatch, "93.184.216.34")
    assert str(DEPLOYED.resolve("hooks.example.com", 443)) == "93.184.216.34"


def test_make_dev_allows_this_machine_only(monkeypatch: pytest.MonkeyPatch) -> None:
    resolving(monkeypatch, "127.0.0.1")
    assert str(MAKE_DEV.resolve("localhost", 9000)) == "127.0.0.1"
    MAKE_DEV.check_url("http://127.0.0.1:9000/hooks")
    resolving(monkeypatch, "10.0.0.1")
    with pytest.raises(UnsafeUrlError):
        MAKE_DEV.resolve("router.lan", 80)
    with pytest.raises(UnsafeUrlError):
        MAKE_DEV.check_url("http://hooks.example.com/x")


def test_a_refused_connection_is_a_failed_attempt_not_an_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    outcome = post(f"http://127.0.0.1:{port}/x", b"{}", {}, MAKE_DEV, timeout=2)
    assert (outcome.status, outcome.error) == (None, "connection refused")
