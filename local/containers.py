"""Lambda's concurrency model for the local gateway: one event per container at a time.

A Powertools resolver keeps the event it is serving on itself (``app.current_event``,
``app.context``), as Lambda allows: a container never serves two events at once. The local
gateway is threaded, so each handler group gets a pool of containers, each a fresh instance
of the handler's module (its own resolver and idempotency config); an event takes an idle
container or starts one, up to `MAX_CONTAINERS`, and waits for one beyond that. What the
modules share is what Lambda containers of one function would not, but that is safe to
share: ``lambdas.runtime``'s clients and caches (thread-safe) and the Powertools logger.
"""

from __future__ import annotations

import importlib.util
import queue
import threading
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
MAX_CONTAINERS = 8


def load_handler(module_name: str) -> Handler:
    """A fresh instance of `module_name` (not the one in ``sys.modules``) and its handler."""
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(module_name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler: Handler = module.handler
    return handler


class Containers:
    """The warm containers of one function; `invoke` is what the gateway calls per event."""

    def __init__(self, module_name: str, limit: int = MAX_CONTAINERS) -> None:
        self._module_name = module_name
        self._limit = limit
        self._idle: queue.SimpleQueue[Handler] = queue.SimpleQueue()
        self._started = 0
        self._lock = threading.Lock()

    @property
    def started(self) -> int:
        """Containers started so far (cold starts)."""
        return self._started

    def invoke(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        """Serve `event` on a container no other event is using."""
        handler = self._acquire()
        try:
            return handler(event, context)
        finally:
            self._idle.put(handler)

    def _acquire(self) -> Handler:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            cold = self._started < self._limit
            if cold:
                self._started += 1
        return load_handler(self._module_name) if cold else self._idle.get()
