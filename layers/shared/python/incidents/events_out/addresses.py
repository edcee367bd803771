"""Which hosts and addresses a webhook may name: the same answer at registration and at
delivery, on every Python version.

A host is read the way the system's resolver reads it: IDNA (UTS #46) maps full-width
digits and dots to ASCII, and a name that is all digits, dots and hex in any of the legacy
IPv4 spellings (``127.1``, ``0x7f000001``, ``017700000001``, ``2130706433``) is an address,
as ``inet_aton`` and ``getaddrinfo`` take it. Addresses are refused by explicit lists of
the IANA special-purpose registries (RFC 6890 and its updates), not by `ipaddress`'s
``is_global``, whose answers changed between Python 3.11 and 3.13; IPv6 forms that embed an
IPv4 address (mapped, IPv4-compatible, NAT64, 6to4) are judged by the address they embed.
"""

from __future__ import annotations

import ipaddress
import socket
import unicodedata

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REFUSED_V4 = tuple(
    ipaddress.IPv4Network(block)
    for block in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24",
        "192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15",
        "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    )
)  # fmt: skip
"""This network, private, shared (CGN), loopback, link-local, IETF assignments, the
documentation networks, AS112, 6to4 relays, benchmarking, multicast, reserved, broadcast."""
REFUSED_V6 = tuple(
    ipaddress.IPv6Network(block)
    for block in (
        "::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20",
        "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    )
)  # fmt: skip
"""Unspecified, loopback and IPv4-compatible (::/96), local-use NAT64, discard-only, IETF
protocol assignments (Teredo, ORCHID, ...), documentation, SRv6 SIDs, unique local,
link-local, site-local (deprecated, still routed by some), multicast."""
GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
MAX_NAME = 253
MAX_LABEL = 63


class HostError(ValueError):
    """A host a webhook URL cannot name, and why."""


def public(address: IPAddress) -> bool:
    """Whether `address` is a public unicast address (one embedded in IPv6 judged as IPv4)."""
    if isinstance(address, ipaddress.IPv4Address):
        return (
            not any(address in block for block in REFUSED_V4) and str(address) != "255.255.255.255"
        )
    embedded = _embedded_v4(address)
    if embedded is not None:
        return public(embedded)
    return address in GLOBAL_UNICAST and not any(address in block for block in REFUSED_V6)


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address a mapped, NAT64 or 6to4 address carries."""
    if address in MAPPED or address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in SIX_TO_FOUR:
        return ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF)
    return None


def parse_host(host: str) -> str | IPAddress:
    """`host` as the resolver would take it: an address, or a checked ASCII name;
    `HostError` saying why it is neither."""
    if host.startswith("[") and host.endswith("]"):
        if "%" in host:
            raise HostError("an IPv6 zone names a link on this machine, not a public address")
        try:
            return ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise HostError(f"{host[:80]} is not an IPv6 address") from None
    if any(unicodedata.category(char)[0] in "CZ" for char in host):
        raise HostError("the host holds a control, format, space or separator character")
    ascii_name = _idna(host)
    address = _ipv4_spelling(ascii_name)
    return address if address is not None else ascii_name


def _idna(host: str) -> str:
    """The ASCII form of `host` (IDNA 2003 with nameprep: full-width digits and dots map to
    ASCII), every label 1 to 63 characters, the name at most 253."""
    try:
        ascii_name = host.encode("idna").decode("ascii").lower()
    except UnicodeError as error:
        raise HostError(f"the host is not a valid domain name: {error}") from None
    labels = ascii_name.rstrip(".").split(".")
    if len(ascii_name) > MAX_NAME or any(not 1 <= len(label) <= MAX_LABEL for label in labels):
        raise HostError("the host has an empty label, a label over 63 characters or is over 253")
    return ascii_name


def _ipv4_spelling(name: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address `name` spells for the resolver (``inet_aton``'s forms), if any."""
    if not name or any(char not in "0123456789abcdefx." for char in name):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(name.rstrip(".")))
    except OSError:
        return None
