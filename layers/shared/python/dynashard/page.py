"""What a fan-out returns: the page, its cursor and what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field

from dynashard.streams import Item


@dataclass
class PageStats:
    """Cost of one page, for logs and metrics (RCUs by DynamoDB's rules, see `capacity`)."""

    streams: int = 0
    requests: int = 0
    round_trips: int = 0
    items_read: int = 0
    items_returned: int = 0
    duplicates_dropped: int = 0
    read_units: float = 0.0
    throttle_retries: int = 0
    requests_per_wave: list[int] = field(default_factory=list)


@dataclass
class Page:
    """Items in order, and the cursor for the next page (None when there is none)."""

    items: list[Item]
    next_cursor: str | None
    has_more: bool
    stats: PageStats = field(default_factory=PageStats)
