"""What a client's requests consumed, as DynamoDB Local reports it (``ReturnConsumedCapacity``
asked on each): the benches' read and write units, and their requests."""

from __future__ import annotations

import threading
from typing import Any

READS = frozenset({"GetItem", "Query", "BatchGetItem"})


class Units:
    """Sums the ``ConsumedCapacity`` of a client's requests, asking for it on each (thread
    safe: the benches share one client across their workers)."""

    def __init__(self, client: Any) -> None:
        self.read = self.write = 0.0
        self.requests = self.writes = 0
        self.transacted = 0
        """Items written in transactions (DynamoDB bills each twice; Local reports once)."""
        self._transactions = 0
        self._lock = threading.Lock()
        client.meta.events.register("before-parameter-build.dynamodb", self._ask)
        client.meta.events.register("after-call.dynamodb", self._add)

    def _ask(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        params.setdefault("ReturnConsumedCapacity", "TOTAL")
        if model.name == "TransactWriteItems":
            with self._lock:
                self.transacted += len(params.get("TransactItems", []))

    def billed_small_writes(self) -> int:
        """Write units by DynamoDB's rules for items under 1 KB: one a plain write, two an
        item of a transaction."""
        return self.writes - self._transactions + 2 * self.transacted

    def _add(self, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        consumed = parsed.get("ConsumedCapacity") or []
        units = sum(
            float(entry.get("CapacityUnits", 0) or 0)
            for entry in (consumed if isinstance(consumed, list) else [consumed])
        )
        with self._lock:
            self.requests += 1
            if model.name in READS:
                self.read += units
            else:
                self.write += units
                self.writes += 1
                self._transactions += model.name == "TransactWriteItems"
