"""What a fan-out returns: the page, its cursor and what it cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dynashard.item import Item, ItemDeserializer, python_item

T = TypeVar("T")


@dataclass
class PageStats:
    """Cost of one page, for logs and metrics."""

    streams: int = 0
    requests: int = 0
    round_trips: int = 0
    items_read: int = 0
    items_returned: int = 0
    contributors: int = 0
    """Streams that supplied at least one returned item: the fewest a page could query."""
    duplicates_dropped: int = 0
    modelled_read_units: float = 0.0
    """RCUs by DynamoDB's rules (`capacity`), from the items each request returned."""
    consumed_read_units: float = 0.0
    """RCUs the engine reported (``ReturnConsumedCapacity``), summed over requests, each at
    least DynamoDB's minimum unit."""
    every_request_reported: bool = True
    """Whether every response carried ``ConsumedCapacity`` (stubs and some engines omit it)."""
    throttle_retries: int = 0
    requests_per_wave: list[int] = field(default_factory=list)
    elapsed_ms: float = 0.0
    """Wall-clock time of the page, cursor checks included."""
    budget_spent: bool = False
    """Whether the page stopped short of its limit because its budget was spent."""

    def add_wave(self, requests: Sequence[int]) -> None:
        """One wave of concurrent reads, given each read's requests. A read that goes on after
        a ``LastEvaluatedKey`` sends its next request only when the last one returned, so the
        wave takes as many round trips as its longest read has requests."""
        for step in range(max(requests, default=0)):
            self.requests_per_wave.append(sum(1 for count in requests if count > step))
            self.round_trips += 1

    @property
    def read_units(self) -> float:
        """RCUs of the page: the engine's own figure where it gave one, else the model's."""
        if self.every_request_reported:
            return self.consumed_read_units
        return self.modelled_read_units


@dataclass
class Page:
    """Items in order, and the cursor for the next page (None when there is none)."""

    items: list[Item]
    next_cursor: str | None
    has_more: bool
    stats: PageStats = field(default_factory=PageStats)

    def deserialized(self, deserializer: ItemDeserializer[T]) -> list[T]:
        """The items through `deserializer` (the caller's own models, for example)."""
        return [deserializer(item) for item in self.items]

    def python_items(self) -> list[dict[str, Any]]:
        """The items with plain Python values, as boto3's resource layer returns them."""
        return self.deserialized(python_item)
