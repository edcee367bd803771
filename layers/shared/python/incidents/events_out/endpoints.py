"""Posting to a webhook's URL without becoming a proxy into the network it runs in (SSRF).

A URL is checked when it is registered (scheme, no credentials, no literal private address)
and again at every delivery: the host is resolved, every address must be public, and the
request connects to the address that was checked (a second lookup could answer otherwise),
with TLS verified against the host name. Redirects are not followed; the body read back is
bounded.

The whole attempt has one deadline, `TIMEOUT_SECONDS` from its start: connecting, the TLS
handshake, sending, the status line, the headers and the bounded body together. A socket
timeout bounds each read, not their sum (an endpoint answering one header byte every 2 s
held an attempt for 44 s under a 10 s "total" timeout), so a watchdog shuts the socket down
at the deadline, whatever the attempt is waiting on, and the attempt is `timed out`.
"""

from __future__ import annotations

import email.utils
import http.client
import ipaddress
import socket
import ssl
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import SplitResult, urlsplit

from incidents.errors import DomainError
from incidents.events_out.addresses import HostError, IPAddress, parse_host, public

TIMEOUT_SECONDS = 10.0
REFUSED = "refused: "
"""How an attempt's reason starts when the address policy refused its URL."""
RETRY_AFTER_STATUSES = (429, 503)
RESPONSE_BYTES = 4096
"""Of a response body, what is read (and dropped): the status is what counts."""
HTTPS_PORT, FIRST_OPEN_PORT = 443, 1024
"""Ports a webhook may use: https's, and the unprivileged range (no SSH, SMTP or Redis on
a public host's well-known ports: the delivery log would otherwise scan them)."""


class UnsafeUrlError(DomainError):
    """A webhook URL deliveries must not go to."""

    code = "invalid_url"


@dataclass(frozen=True)
class EndpointPolicy:
    """Where deliveries may go: public https on port 443 or 1024-65535 only, unless
    `allow_loopback` (``make dev``: http and https to 127.0.0.1, ::1 and localhost, any
    port, for a receiver on the same machine). Hosts and addresses as `addresses` reads
    them: the same answer at registration and at every delivery."""

    allow_loopback: bool = False

    def check_url(self, url: str) -> tuple[SplitResult, str | IPAddress]:
        """The URL's parts and its host as the resolver reads it, or `UnsafeUrlError`
        saying what is wrong with it."""
        if any(unicodedata.category(char)[0] == "C" or char.isspace() for char in url):
            raise UnsafeUrlError("a webhook URL must not hold control characters or spaces")
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            raise UnsafeUrlError("a webhook URL must not carry credentials")
        if not parts.hostname:
            raise UnsafeUrlError("a webhook URL needs a host")
        host = self._host_of(parts)
        loopback = _loopback(host)
        if loopback and not self.allow_loopback:
            raise UnsafeUrlError(f"{parts.hostname} is this machine, not a public address")
        if parts.scheme.lower() != "https" and not loopback:
            raise UnsafeUrlError("a webhook URL must be https")
        if not isinstance(host, str):
            self.check_address(host)
        self._check_port(parts, loopback)
        return parts, host

    @staticmethod
    def _host_of(parts: SplitResult) -> str | IPAddress:
        """The URL's host as the resolver reads it (`addresses.parse_host`)."""
        netloc_host = parts.netloc.rsplit("@", 1)[-1]
        bracketed = netloc_host.startswith("[")
        try:
            return parse_host(f"[{parts.hostname}]" if bracketed else parts.hostname or "")
        except HostError as error:
            raise UnsafeUrlError(str(error)) from None

    @staticmethod
    def _check_port(parts: SplitResult, loopback: bool) -> None:
        try:
            port = parts.port
        except ValueError as error:
            raise UnsafeUrlError(f"bad port: {error}") from None
        if port is None or loopback or port == HTTPS_PORT or port >= FIRST_OPEN_PORT:
            return
        raise UnsafeUrlError(f"port {port}: a webhook URL may use 443 or 1024-65535")

    def check_address(self, address: IPAddress) -> None:
        """Refuse an address that is not public (loopback allowed by the policy)."""
        if self.allow_loopback and address.is_loopback:
            return
        if not public(address):
            raise UnsafeUrlError(f"{address} is not a public address")

    def resolve(self, host: str | IPAddress, port: int) -> IPAddress:
        """The address to connect to: every address `host` resolves to must pass."""
        if not isinstance(host, str):
            self.check_address(host)
            return host
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
    retry_after: int | None = None
    """Seconds a 429 or 503 asked to wait (its ``Retry-After``: seconds or an HTTP date)."""

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
    """POST `body` to `url` once, within `timeout` seconds in all; never raises: whatever
    goes wrong (a refused address, a name IDNA cannot encode, a reset) is a failed attempt
    saying why."""
    started = time.monotonic()
    watchdog = _Watchdog()
    try:
        with watchdog.armed(timeout):
            status, retry_after = _post_checked(
                url, body, headers, policy, timeout=timeout, watchdog=watchdog
            )
        if watchdog.fired and 200 <= status < 300:  # cut mid-answer: no success
            return Outcome(None, "timed out", _since(started))
        return Outcome(status, None, _since(started), retry_after)
    except UnsafeUrlError as error:
        return Outcome(None, f"{REFUSED}{error}", _since(started))
    except Exception as error:  # an attempt's every failure is its outcome, logged
        reason = "timed out" if watchdog.fired else _reason(error)
        return Outcome(None, reason, _since(started))


class _Watchdog:
    """Shuts the attempt's socket down at its deadline (a blocked read returns at once)."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.fired = False
        self._lock = threading.Lock()

    @contextmanager
    def armed(self, seconds: float) -> Iterator[None]:
        timer = threading.Timer(seconds, self._fire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            with self._lock:
                if self.sock is not None:
                    self.sock.close()

    def watch(self, sock: socket.socket) -> None:
        """The socket to shut down from now on (the TLS socket once it wraps the TCP one)."""
        with self._lock:
            self.sock = sock
            if self.fired:
                raise TimeoutError("the attempt's deadline passed")

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            if self.sock is not None:
                with suppress(OSError):  # not connected yet, or already closed
                    self.sock.shutdown(socket.SHUT_RDWR)


TLS = ssl.create_default_context()
"""Certificates verified against the system's roots, the host name checked (TLS 1.2+)."""


def _post_checked(
    url: str,
    body: bytes,
    headers: dict[str, str],
    policy: EndpointPolicy,
    *,
    timeout: float,
    watchdog: _Watchdog,
) -> tuple[int, int | None]:
    parts, host = policy.check_url(url)
    https = parts.scheme.lower() == "https"
    port = parts.port or (443 if https else 80)
    address = str(policy.resolve(host, port))
    sock = socket.create_connection((address, port), timeout=timeout)
    watchdog.watch(sock)
    if https:
        sock = TLS.wrap_socket(sock, server_hostname=str(host), do_handshake_on_connect=False)
        watchdog.watch(sock)
        sock.do_handshake()
    connection = http.client.HTTPConnection(str(host), port, timeout=timeout)
    connection.sock = sock
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    connection.request(
        "POST", path, body=body, headers={**headers, "Host": _host_header(parts, host)}
    )
    response = connection.getresponse()
    response.read(RESPONSE_BYTES)
    asks_to_wait = response.status in RETRY_AFTER_STATUSES
    return int(response.status), _retry_after(response.getheader("Retry-After"), asks_to_wait)


def _retry_after(value: str | None, asks_to_wait: bool) -> int | None:
    """``Retry-After`` as seconds from now (RFC 9110: delay-seconds or an HTTP date), read
    only on the statuses that ask a client to wait."""
    if not value or not asks_to_wait:
        return None
    value = value.strip()
    if value.isdecimal():
        return int(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0, int((when - datetime.now(UTC)).total_seconds()))


def _host_header(parts: SplitResult, host: str | IPAddress) -> str:
    """The ``Host`` header in ASCII (an internationalized name in its IDNA form)."""
    name = f"[{host}]" if isinstance(host, ipaddress.IPv6Address) else str(host)
    return f"{name}:{parts.port}" if parts.port else name


def _reason(error: Exception) -> str:
    """What a failed attempt's log says about `error`."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, TimeoutError):  # socket.timeout is TimeoutError
        return "timed out"
    if isinstance(error, ssl.SSLError | ssl.CertificateError):
        return f"TLS failed: {error}"
    if isinstance(error, OSError):
        return f"connection failed: {error}"
    return f"request failed: {type(error).__name__}"


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _loopback(host: str | IPAddress) -> bool:
    if isinstance(host, str):
        return host.rstrip(".") == "localhost" or host.rstrip(".").endswith(".localhost")
    return host.is_loopback or (
        isinstance(host, ipaddress.IPv6Address)
        and host.ipv4_mapped is not None
        and host.ipv4_mapped.is_loopback
    )
