"""How every list pages: one request shape (size, cursor, budget, order, window, filter),
one page shape, and one way through the fan-out engine.

Incidents, timelines, events, changes, webhooks and deliveries all page alike (a signed
cursor bound to what it lists, the same page budget), so they share this module rather
than each importing the incident lists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from dynashard import FanOutQuery, PartitionStream, SortKeyRange, shard_keys
from dynashard.query import Bound, Item, PageBudget, PageStats
from incidents.errors import InvalidFilterError
from incidents.models import Severity, State, Status, state_of, timestamp
from incidents.store import Store
from incidents.table import GSI2, TABLE_SCHEMA

DEFAULT_LIMIT = 25
MAX_LIMIT = 100

T = TypeVar("T")


@dataclass(frozen=True)
class ListPage(Generic[T]):
    """One page of a list, the cursor for the next one, and what it cost."""

    items: list[T]
    next_cursor: str | None
    has_more: bool
    stats: PageStats = field(default_factory=PageStats)


@dataclass(frozen=True)
class CreatedWindow:
    """Incidents created from `since` (included) to `until` (excluded), either open-ended.

    Read through the sort keys' creation time (key conditions, not filters), so a window
    costs what its items cost."""

    since: datetime | None = None
    until: datetime | None = None

    def __post_init__(self) -> None:
        if self.since and self.until and self.since >= self.until:
            raise InvalidFilterError("since must be before until")

    def sort_range(self, prefix: str) -> SortKeyRange:
        """The keys ``<prefix><created at>#...`` inside the window."""
        base = SortKeyRange.begins_with(prefix) if prefix else SortKeyRange()
        lower = Bound(prefix + timestamp(self.since), True) if self.since else None
        upper = Bound(prefix + timestamp(self.until), False) if self.until else None
        return base.narrowed(lower, upper)

    def binding(self) -> tuple[str, str]:
        """What a cursor is bound to: the window, normalized to UTC."""
        return (
            f"since={timestamp(self.since) if self.since else ''}",
            f"until={timestamp(self.until) if self.until else ''}",
        )


@dataclass(frozen=True)
class IncidentFilter:
    """Statuses and severities to keep (none: all), as a filter expression on each stream:
    DynamoDB reads, and bills, the whole window and returns the matching items (decision
    006 argues why a filter and not a key per status or severity)."""

    statuses: tuple[Status, ...] = ()
    severities: tuple[Severity, ...] = ()

    def require_state(self, state: State) -> None:
        """Statuses must belong to the list's state: a RESOLVED incident is never OPEN."""
        wrong = sorted(s.value for s in self.statuses if state_of(s) is not state)
        if wrong:
            raise InvalidFilterError(f"status {', '.join(wrong)} is not in state {state.value}")

    def stream_options(self, prefix: str) -> dict[str, Any]:
        """`PartitionStream` fields filtering on ``<prefix>status`` and ``<prefix>severity``."""
        clauses, names, values = [], {}, {}
        for tag, attribute, chosen in (
            ("st", "status", self.statuses),
            ("sv", "severity", self.severities),
        ):
            if not chosen:
                continue
            names[f"#f{tag}"] = prefix + attribute
            placeholders = []
            for n, value in enumerate(sorted(set(chosen))):
                values[f":f{tag}{n}"] = {"S": value.value}
                placeholders.append(f":f{tag}{n}")
            clauses.append(f"#f{tag} IN ({', '.join(placeholders)})")
        if not clauses:
            return {}
        return {
            "filter_expression": " AND ".join(clauses),
            "expression_names": names,
            "expression_values": values,
        }

    def binding(self) -> tuple[str, str]:
        """What a cursor is bound to: the sets chosen, in one order."""
        return (
            "status=" + ",".join(sorted({s.value for s in self.statuses})),
            "severity=" + ",".join(sorted({s.value for s in self.severities})),
        )


@dataclass(frozen=True)
class PageRequest:
    """Page size and position, as the caller sent them, and what the page may spend."""

    limit: int = DEFAULT_LIMIT
    cursor: str | None = None
    budget: PageBudget = field(default_factory=PageBudget)
    descending: bool = True
    """Newest first (the default) or oldest first."""
    window: CreatedWindow = field(default_factory=CreatedWindow)
    filter: IncidentFilter = field(default_factory=IncidentFilter)


def gsi2_streams(
    store: Store, base: str, count: int, window: CreatedWindow, options: dict[str, Any]
) -> list[PartitionStream]:
    """One stream per shard of `base` on GSI2, within `window` (on the time the sort keys
    start with), filtered by `options` (`PartitionStream` fields)."""
    return [
        PartitionStream(
            store.table_name,
            GSI2.partition_key,
            pk,
            GSI2.sort_key,
            window.sort_range(""),
            index_name=GSI2.name,
            **options,
        )
        for pk in shard_keys(base, count)
    ]


def partition_stream(
    store: Store, pk: str, sort_range: SortKeyRange | None = None, **options: Any
) -> PartitionStream:
    """The table's partition `pk` (a range of its sort keys, `options`: `PartitionStream` fields) as
    a stream, its key attributes named by the table's schema."""
    table = TABLE_SCHEMA
    within = sort_range or SortKeyRange()
    return PartitionStream(
        store.table_name, table.partition_key, pk, table.sort_key, within, **options
    )


def fanout_page(
    store: Store,
    streams: Sequence[PartitionStream],
    binding: str,
    page: PageRequest,
    *,
    identity: Callable[[Item], str],
    convert: Callable[[Item], T],
    items_moving: bool = False,
    streams_may_change: bool = False,
) -> ListPage[T]:
    """One page of `streams` merged in order through the fan-out engine, each item once
    (by `identity`) and as `convert` makes it (`items_moving`: a halving's mover runs on
    one of the streams' keys, `dynashard.resharding.mover`; `streams_may_change`: the list
    is over whatever the caller belongs to when each page is read, and its binding alone
    ties a cursor to it)."""
    if not streams:
        return ListPage(items=[], next_cursor=None, has_more=False)
    query = FanOutQuery(
        list(streams),
        binding,
        limit=page.limit,
        descending=page.descending,
        writes_ahead=not page.descending,  # oldest first: new items land ahead
        identity=identity,
        cursor=page.cursor,
        budget=page.budget,
        items_moving=items_moving,
        streams_may_change=streams_may_change,
    )
    result = store.engine.page(query)
    return ListPage(
        items=[convert(item) for item in result.items],
        next_cursor=result.next_cursor,
        has_more=result.has_more,
        stats=result.stats,
    )


def prefix_page(
    store: Store,
    partition: tuple[str, str],
    binding: str,
    convert: Callable[[Item], T],
    *,
    limit: int,
    cursor: str | None,
) -> ListPage[T]:
    """A page of the items under a prefix of a partition's sort keys (`partition`: the key
    and the prefix), by sort key, as `convert` makes them: an account's subjects kept side
    by side (its schedules, its escalation policies)."""
    pk, prefix = partition
    stream = partition_stream(store, pk, SortKeyRange.begins_with(prefix))
    page = store.engine.page(FanOutQuery([stream], binding=binding, limit=limit, cursor=cursor))
    return ListPage([convert(item) for item in page.items], page.next_cursor, page.has_more)


def partition_page(
    store: Store,
    partition: tuple[str, SortKeyRange],
    binding: str,
    page: PageRequest,
    convert: Callable[[Item], T],
) -> ListPage[T]:
    """One partition of the table (its partition key and a range of its sort keys) paged
    like every list: the same cursor, budget and order."""
    stream = partition_stream(store, *partition)
    sort_key = stream.sort_key
    return fanout_page(
        store, [stream], binding, page, identity=lambda item: item[sort_key]["S"], convert=convert
    )
