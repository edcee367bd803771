"""CORS as the API answers it, in one place for the handlers, the local gateway and the stack.

A browser asks twice: the preflight (``OPTIONS``, answered by the gateway: which methods and
request headers it may send) and the request itself, whose answer needs only to name the
origin and the response headers the page may read (``ETag``, ``Location``,
``Retry-After``; without ``Access-Control-Expose-Headers`` a page reads only the CORS-safelisted
ones, such as ``Content-Type``). Every answer says ``Vary: Origin``: its CORS headers depend on
the request's ``Origin``, so a shared cache must key on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

REQUEST_HEADERS = ["Authorization", "Content-Type", "Idempotency-Key", "If-Match", "If-None-Match"]
"""Headers a browser page sends to the API (what a preflight allows)."""
EXPOSED_HEADERS = ["ETag", "Location", "Retry-After", "RateLimit", "RateLimit-Policy"]
"""Response headers a browser page may read beyond the safelisted ones."""
MAX_AGE_SECONDS = 3600
"""How long a browser may reuse a preflight's answer."""


def response_headers(origin: str, allowed: Sequence[str]) -> dict[str, str]:
    """The CORS headers of an answer (not a preflight) to a request from `origin`."""
    if origin not in allowed:
        return {"Vary": "Origin"}
    return {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Expose-Headers": ",".join(EXPOSED_HEADERS),
        "Vary": "Origin",
    }


def preflight_headers(
    origin: str, allowed: Sequence[str], methods: Sequence[str]
) -> dict[str, str]:
    """The headers of a preflight's answer: what the page may send, and for how long."""
    headers = {
        "Access-Control-Allow-Methods": ",".join(methods),
        "Access-Control-Allow-Headers": ",".join(REQUEST_HEADERS),
        "Access-Control-Max-Age": str(MAX_AGE_SECONDS),
        "Vary": "Origin",
    }
    if origin in allowed:
        headers["Access-Control-Allow-Origin"] = origin
    return headers


def with_cors(response: dict[str, Any], origin: str, allowed: Sequence[str]) -> dict[str, Any]:
    """A Lambda proxy response with `response_headers` added (``Vary`` merged with what it
    already lists)."""
    cors = response_headers(origin, allowed)
    multi = response.get("multiValueHeaders")
    if isinstance(multi, dict):
        vary = _merged_vary(", ".join(multi.get("Vary", [])))
        multi.update({name: [value] for name, value in cors.items()})
        multi["Vary"] = [vary]
        return response
    headers = response.setdefault("headers", {})
    vary = _merged_vary(str(headers.get("Vary", "")))
    headers.update(cors)
    headers["Vary"] = vary
    return response


def _merged_vary(present: str) -> str:
    names = [v.strip() for v in present.split(",") if v.strip() and v.strip().lower() != "origin"]
    return ", ".join([*names, "Origin"])


def request_header(headers: Mapping[str, str] | None, name: str) -> str:
    """A request header whatever its case ("" without one): ``Origin``, ``Authorization``."""
    return next((v for k, v in (headers or {}).items() if k.lower() == name.lower()), "")
