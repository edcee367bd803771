"""dynashard on asyncio: the fan-out engine's twin for aiobotocore clients.

``pip install dynashard[async]``. Pages, cursors and costs are those of
`dynashard.FanOutEngine` (the same steps, driven by an event loop instead of threads), so a
cursor issued by either engine continues on the other.
"""

from __future__ import annotations

try:
    from aiobotocore.config import AioConfig
except ImportError as missing:  # the extra is not installed
    raise ImportError(
        "dynashard.aio needs aiobotocore: pip install 'dynashard[async]'"
    ) from missing

from dynashard.aio.engine import AsyncFanOutEngine


def client_config(max_concurrency: int) -> AioConfig:
    """aiobotocore config for a fan-out client: a pool as large as the Queries in flight."""
    return AioConfig(max_pool_connections=max_concurrency, retries={"mode": "standard"})


__all__ = ["AsyncFanOutEngine", "client_config"]
