"""Reading events: one incident's timeline, and the account's events (``GET /events``).

Both go through the fan-out engine, so they page like every list (signed cursor bound to
the caller, the route and the filters; the same page budget): the timeline is one stream
(the incident's partition, by number), the account's events a stream per shard of its
GSI2 index (by time), merged in exact order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from dynashard import InvalidCursorError, PartitionStream, SortKeyRange
from dynashard.query import Item
from incidents.keys import event_key, timeline_prefix
from incidents.models import AccountEvent, EventType, TimelineEvent, timestamp
from incidents.paging import ListPage, PageRequest, fanout_page, gsi2_streams, partition_stream
from incidents.store import Caller, Store
from incidents.table import PK, SK
from incidents.tenant_shards import Family
from incidents.timeline.events import (
    Counted,
    account_event_from_item,
    event_from_item,
    require_counted,
)

EventPage = ListPage[TimelineEvent]
AccountEventPage = ListPage[AccountEvent]
T = TypeVar("T")
SETTLE_SECONDS = 15
"""How long after its ``at`` an event may still commit, at most: a command stamps ``at``,
then writes it in a transaction, all inside the API function's 10 s timeout, and a request
sent before that ends is answered within the 3 s read timeout (`tests/infra` checks the
sum stays below this). An oldest-first read of ``/events`` stops this long before now, so
no later commit can land behind what it served."""
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SETTLED_CURSOR = re.compile(r"^([0-9]{1,17})\.(.+)$", re.DOTALL)
"""An oldest-first ``/events`` cursor: the walk's horizon (microseconds since the epoch),
then the engine's cursor, which is bound to that horizon (an edited one is refused)."""


@dataclass(frozen=True)
class EventRequest:
    """A page of events: position and budget (`PageRequest`) and the types to keep."""

    page: PageRequest
    types: tuple[EventType, ...] = ()

    def stream_options(self) -> dict[str, Any]:
        """`PartitionStream` fields keeping only `types` (a filter expression: DynamoDB reads, and
        bills, every event of the range and returns the matching ones)."""
        if not self.types:
            return {}
        chosen = sorted(set(self.types))
        values = {f":t{n}": {"S": kind.value} for n, kind in enumerate(chosen)}
        return {
            "filter_expression": f"#type IN ({', '.join(values)})",
            "expression_names": {"#type": "type"},
            "expression_values": values,
        }

    def binding(self, caller: Caller, route: str, *scope: str) -> str:
        """Everything a cursor is valid for."""
        kinds = ",".join(sorted({kind.value for kind in self.types}))
        parts = [caller.account_id, caller.user_id, route, *scope, f"type={kinds}"]
        return "\x1f".join([*parts, *self.page.window.binding()])


def stored_events(
    store: Store, account: str, incident_id: str, first: int, last: int | None = None
) -> list[Item]:
    """The incident's stored events `first` to `last` (to the end: None), in ``seq``
    order, strongly read: what the publisher fills a gap with and the backfill counts."""
    pk, low = event_key(account, incident_id, first)
    high = event_key(account, incident_id, last)[1] if last is not None else timeline_prefix() + "~"
    pages = store.client.get_paginator("query").paginate(
        TableName=store.table_name,
        KeyConditionExpression=f"{PK} = :pk AND {SK} BETWEEN :low AND :high",
        ExpressionAttributeValues={":pk": {"S": pk}, ":low": {"S": low}, ":high": {"S": high}},
        ConsistentRead=True,
    )
    return [item for page in pages for item in page.get("Items", [])]


def event_counter(store: Store, caller: Caller, incident_id: str) -> Counted:
    """The incident's summary and event counter (one strongly consistent read; 404 if it is
    not in the caller's account): what a timeline's ETag names."""
    return require_counted(store, caller, incident_id)


def incident_timeline(
    store: Store,
    caller: Caller,
    incident_id: str,
    request: EventRequest,
    counted: Counted | None = None,
) -> EventPage:
    """The incident's events by number (oldest first unless asked otherwise); 404 if the
    incident is not in the caller's account (checked on the first page, unless the caller
    read it already, `counted`: a cursor is bound to the incident it came from)."""
    if request.page.cursor is None and counted is None:
        require_counted(store, caller, incident_id)
    pk, _ = event_key(caller.account_id, incident_id, 1)
    in_timeline = SortKeyRange.begins_with(timeline_prefix())
    stream = partition_stream(store, pk, in_timeline, **request.stream_options())
    binding = request.binding(caller, "timeline", incident_id)
    return _page(store, [stream], binding, request.page)


def account_events(store: Store, caller: Caller, request: EventRequest) -> AccountEventPage:
    """The account's events (its incidents' changes and its schedules' handoffs), by time
    (newest first by default), within the window on the events' time."""
    return account_event_items(store, caller, request, account_event_from_item)


def account_event_items(
    store: Store, caller: Caller, request: EventRequest, convert: Callable[[Item], T]
) -> ListPage[T]:
    """`account_events` with each event's item as `convert` makes it (a replay needs the
    summary the item keeps beside the event)."""
    meta = store.shards.meta(caller.account_id, Family.EVENTS)
    base, window = Family.EVENTS.base(caller.account_id), request.page.window
    streams = gsi2_streams(store, base, meta.read_count, window, request.stream_options())
    binding = request.binding(caller, "events")
    return fanout_page(
        store,
        streams,
        binding,
        request.page,
        identity=_event_id,
        convert=convert,
        items_moving=store.shards.counts(Family.EVENTS).items_may_move(meta),
    )


def _page(
    store: Store, streams: Sequence[PartitionStream], binding: str, page: PageRequest
) -> EventPage:
    return fanout_page(store, streams, binding, page, identity=_event_id, convert=event_from_item)


def _event_id(item: Item) -> str:
    return str(item["id"]["S"])


@dataclass(frozen=True)
class SettledPage:
    """A page of an oldest-first ``/events`` walk, and where the next poll starts."""

    page: AccountEventPage
    next_since: str | None
    """On the walk's last page, the horizon it stopped at: poll again with ``since`` set
    to it and no event is missed or served twice."""


def settled_events(
    store: Store, caller: Caller, request: EventRequest, now: datetime
) -> SettledPage:
    """`account_events` oldest first, up to the settled horizon (`SETTLE_SECONDS` before
    `now`, or the window's ``until`` if earlier), fixed on the walk's first page."""
    window = request.page.window
    horizon, cursor = _horizon(request.page.cursor, window.until, now)
    if window.since is not None and window.since >= horizon:
        return SettledPage(ListPage([], None, False), timestamp(window.since))
    settled = replace(window, until=horizon)
    page = account_events(
        store, caller, replace(request, page=replace(request.page, cursor=cursor, window=settled))
    )
    since_epoch = (horizon - EPOCH) // timedelta(microseconds=1)
    next_cursor = page.next_cursor and f"{since_epoch}.{page.next_cursor}"
    next_since = None if page.has_more else timestamp(horizon)
    return SettledPage(replace(page, next_cursor=next_cursor), next_since)


def _horizon(
    cursor: str | None, until: datetime | None, now: datetime
) -> tuple[datetime, str | None]:
    """The walk's horizon and the engine's cursor: from the cursor past the first page."""
    if cursor is None:
        horizon = now - timedelta(seconds=SETTLE_SECONDS)
        return (min(horizon, until) if until else horizon), None
    match = SETTLED_CURSOR.match(cursor)
    if match is None:
        raise InvalidCursorError("not a cursor of an oldest-first /events walk")
    return EPOCH + timedelta(microseconds=int(match[1])), match[2]
