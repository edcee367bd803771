"""Registration refuses what delivery refuses (issue 37, point 7): hosts read as the
resolver reads them (every IPv4 spelling, full-width digits, IDNA-invalid labels, control
characters), IPv6 special-purpose ranges from explicit lists (the same on Python 3.11 and
3.13, embedded IPv4 judged as IPv4), and ports 443 and 1024-65535 only. Each URL below
registered with 201 before."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from incidents.events_out.addresses import public
from incidents.events_out.endpoints import EndpointPolicy, UnsafeUrlError

DEPLOYED = EndpointPolicy()
MAKE_DEV = EndpointPolicy(allow_loopback=True)

REFUSED = [
    "https://127.1/h", "https://0/h", "https://2130706433/h", "https://0x7f000001/h",
    "https://017700000001/h", "https://0251.0376.0251.0376/h", "https://169.254.43518/h",
    "https://\uff11\uff12\uff17.0.0.1/h", "https://[64:ff9b:1::7f00:1]/h",
    "https://[2002:7f00:1::]/h", "https://[2002:a9fe:a9fe::1]/h", "https://[::127.0.0.1]/h",
    "https://[::169.254.169.254]/h", "https://[fec0::1]/h", "https://[fe80::1%25eth0]/h",
    "https://[2001:db8::1]/h", "https://[2001::1]/h", "https://[100::1]/h",
    f"https://{'a' * 64}.example.com/h", "https://a..example.com/h",
    "https://exa\u202emple.com/h", "https://example.com/h\r\nX: y", "https://example.com/\x00",
    "https://exa\tmple.com/h", "https://example.com:0/h", "https://example.com:22/h",
    "https://example.com:80/h", "http://example.com/h",
    "https://user:pw@example.com/h",
]  # fmt: skip
ACCEPTED = [
    "https://hooks.example.com/h", "https://hooks.example.com:8443/h",
    "https://93.184.216.34/h", "https://[2606:2800:220:1:248:1893:25c8:1946]/h",
    "https://b\u00fccher.example/h", "https://example.com:443/h",
]  # fmt: skip


@pytest.mark.parametrize("url", REFUSED)
def test_registration_refuses_what_delivery_would(url: str) -> None:
    with pytest.raises(UnsafeUrlError):
        DEPLOYED.check_url(url)


@pytest.mark.parametrize("url", ACCEPTED)
def test_public_https_urls_are_taken(url: str) -> None:
    DEPLOYED.check_url(url)


@pytest.mark.parametrize("url", ["http://127.1:9000/h", "http://localhost:80/h", "http://[::1]/h"])
def test_make_dev_takes_this_machine_in_any_spelling(url: str) -> None:
    MAKE_DEV.check_url(url)


@given(st.ip_addresses(v=4))
def test_an_embedded_ipv4_is_judged_as_itself(v4: ipaddress.IPv4Address) -> None:
    """Mapped, NAT64 and 6to4 forms carry the IPv4 verdict; IPv4-compatible ones are refused."""
    mapped = ipaddress.IPv6Address(f"::ffff:{v4}")
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(v4))
    six_to_four = ipaddress.IPv6Address((0x2002 << 112) | (int(v4) << 80) | 1)
    assert public(mapped) == public(nat64) == public(six_to_four) == public(v4)
    assert not public(ipaddress.IPv6Address(int(v4)))
