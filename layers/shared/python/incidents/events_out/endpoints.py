"""Posting to a webhook's URL without becoming a proxy into the network it runs in (SSRF).

A URL is checked when it is registered (scheme, no credentials, no literal private address)
and again at every delivery: the host is resolved, every address must be public, and the
request connects to the address that was checked (a second lookup could answer otherwise),
with TLS verified against the host name. Redirects are not followed; the body read back is
bounded; the whole attempt has one deadline.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

import urllib3

from incidents.errors import DomainError

TIMEOUT_SECONDS = 10.0
RESPONSE_BYTES = 4096
"""Of a response body, what is read (and dropped): the status is what counts."""
NAT64 = ipaddress.ip_network("64:ff9b::/96")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeUrlError(DomainError):
    """A webhook URL deliveries must not go to."""

    code = "invalid_url"


@dataclass(frozen=True)
class EndpointPolicy:
    """Where deliveries may go: public https only, unless `allow_loopback` (``make dev``:
    http and https to 127.0.0.1, ::1 and localhost, for a receiver on the same machine)."""

    allow_loopback: bool = False

    def check_url(self, url: str) -> SplitResult:
        """The URL's parts, or `UnsafeUrlError` saying what is wrong with it."""
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            raise UnsafeUrlError("a webhook URL must not carry credentials")
        if not parts.hostname:
            raise UnsafeUrlError("a webhook URL needs a host")
        try:
            parts.port  # noqa: B018 - raises on a port out of range
        except ValueError as error:
            raise UnsafeUrlError(f"bad port: {error}") from None
        loopback = _names_loopback(parts.hostname)
        if loopback and not self.allow_loopback:
            raise UnsafeUrlError(f"{parts.hostname} is this machine, not a public address")
        if parts.scheme.lower() != "https" and not loopback:
            raise UnsafeUrlError("a webhook URL must be https")
        literal = _literal_address(parts.hostname)
        if literal is not None:
            self.check_address(literal)
        return parts

    def check_address(self, address: IPAddress) -> None:
        """Refuse an address that is not public (loopback allowed by the policy)."""
        if self.allow_loopback and address.is_loopback:
            return
        if not _public(address):
            raise UnsafeUrlError(f"{address} is not a public address")

    def resolve(self, host: str, port: int) -> IPAddress:
        """The address to connect to: every address `host` resolves to must pass."""
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise UnsafeUrlError(f"cannot resolve {host}: {error}") from None
        addresses = [ipaddress.ip_address(str(entry[4][0]).split("%")[0]) for entry in found]
        for address in addresses:
            self.check_address(address)
        return addresses[0]


@dataclass(frozen=True)
class Outcome:
    """What one attempt got: a status, or why there was none, and how long it took."""

    status: int | None
    error: str | None
    duration_ms: int

    @property
    def succeeded(self) -> bool:
        """2xx, and nothing else, is success."""
        return self.status is not None and 200 <= self.status < 300


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    policy: EndpointPolicy,
    timeout: float = TIMEOUT_SECONDS,
) -> Outcome:
    """POST `body` to `url` once, within `timeout` seconds in all; never raises."""
    started = time.monotonic()
    try:
        status = _post_checked(url, body, headers, policy, timeout)
        return Outcome(status, None, _since(started))
    except UnsafeUrlError as error:
        return Outcome(None, f"refused: {error}", _since(started))
    except urllib3.exceptions.HTTPError as error:
        return Outcome(None, _reason(error), _since(started))
    except OSError as error:
        return Outcome(None, f"connection failed: {error}", _since(started))


def _post_checked(
    url: str, body: bytes, headers: dict[str, str], policy: EndpointPolicy, timeout: float
) -> int:
    parts = policy.check_url(url)
    host = parts.hostname or ""
    https = parts.scheme.lower() == "https"
    port = parts.port or (443 if https else 80)
    address = str(policy.resolve(host, port))
    limits = urllib3.Timeout(total=timeout)
    pool: urllib3.HTTPConnectionPool
    if https:
        pool = urllib3.HTTPSConnectionPool(
            address, port, server_hostname=host, assert_hostname=host, timeout=limits, retries=False
        )
    else:
        pool = urllib3.HTTPConnectionPool(address, port, timeout=limits, retries=False)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    with pool:
        response = pool.urlopen(
            "POST",
            path,
            body=body,
            headers={**headers, "host": parts.netloc.rsplit("@", 1)[-1]},
            redirect=False,
            preload_content=False,
            assert_same_host=False,
        )
        response.read(RESPONSE_BYTES)
        response.release_conn()
        return int(response.status)


def _reason(error: urllib3.exceptions.HTTPError) -> str:
    if isinstance(error, urllib3.exceptions.NewConnectionError):  # a ConnectTimeoutError too
        return "connection refused"
    if isinstance(error, urllib3.exceptions.TimeoutError):
        return "timed out"
    if isinstance(error, urllib3.exceptions.SSLError):
        return f"TLS failed: {error}"
    return f"request failed: {type(error).__name__}"


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _names_loopback(host: str) -> bool:
    literal = _literal_address(host)
    return host.lower() == "localhost" if literal is None else literal.is_loopback


def _public(address: IPAddress) -> bool:
    """Globally routable, and no private address hidden inside an IPv6 one."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or (
            ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) if address in NAT64 else None
        )
        if inner is not None:
            return _public(inner)
    return address.is_global and not address.is_multicast
