"""Incident lists, all through the fan-out engine: ordered (newest or oldest first),
deduplicated.

Each list is a fan-out over sharded partitions (a participant's GSI1 shards, several
teams' shards, or the account's GSI2 shards for a state). The cursor binding names the
account, the caller, the route and every filter, so a cursor only pages the list it came
from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from dynashard import FanOutQuery, SortKeyRange, Stream, shard_keys
from dynashard.query import Bound, Item, PageBudget, PageStats
from incidents.errors import ForbiddenError, InvalidFilterError, TooManyTeamsError
from incidents.items import from_item, participation_from_item
from incidents.keys import participant_base, participant_meta
from incidents.models import IncidentSummary, Severity, State, Status, state_of, timestamp
from incidents.store import Caller, Store
from incidents.team_commands import my_team_ids, require_member
from incidents.tenant_shards import Family

DEFAULT_LIMIT = 25
MAX_LIMIT = 100
MAX_TEAMS = 100
"""Teams one "all my teams" page reads (each a stream or more, every one read by the
page's first wave): a member of more names up to this many with ``team=``."""


T = TypeVar("T")


@dataclass(frozen=True)
class ListPage(Generic[T]):
    """One page of a list, the cursor for the next one, and what it cost."""

    items: list[T]
    next_cursor: str | None
    has_more: bool
    stats: PageStats = field(default_factory=PageStats)


IncidentPage = ListPage[IncidentSummary]


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
        """`Stream` fields filtering on ``<prefix>status`` and ``<prefix>severity``."""
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


def my_incidents(store: Store, caller: Caller, state: State, page: PageRequest) -> IncidentPage:
    """Incidents the caller participates in (any role), in `state`."""
    page.filter.require_state(state)  # before any read
    streams, moving = _participant_streams(store, caller.account_id, [caller.user_id], state, page)
    binding = _binding(caller, "my", state, page)
    return _participations_page(store, streams, binding, page, moving=moving)


def my_teams_incidents(
    store: Store,
    caller: Caller,
    state: State,
    page: PageRequest,
    team_ids: Sequence[str] | None = None,
) -> IncidentPage:
    """Incidents of the caller's teams (all, or the subset named), each incident once."""
    page.filter.require_state(state)  # before any read
    mine = my_team_ids(store, caller)
    if not team_ids and len(mine) > MAX_TEAMS:
        raise TooManyTeamsError(
            f"you are in {len(mine)} teams; all my teams reads at most {MAX_TEAMS}: "
            f"name up to {MAX_TEAMS} of them with team="
        )
    chosen = sorted(set(team_ids)) if team_ids else sorted(mine)
    foreign = [team for team in chosen if team not in mine]
    if foreign:
        raise ForbiddenError(f"you are not a member of {', '.join(foreign)}")
    streams, moving = _participant_streams(store, caller.account_id, chosen, state, page)
    # All my teams: bound to the caller, not to today's memberships, so a walk goes on over
    # the teams of the moment (the cursor's position holds; its plan, made for the former
    # stream list, is dropped). Named teams stay bound to the cursor.
    binding = _binding(caller, "my-teams", state, page, *(chosen if team_ids else ["all"]))
    return _participations_page(store, streams, binding, page, moving=moving)


def team_incidents(
    store: Store, caller: Caller, team_id: str, state: State, page: PageRequest
) -> IncidentPage:
    """One team's incidents; members only."""
    page.filter.require_state(state)  # before any read
    require_member(store, caller, team_id)
    streams, moving = _participant_streams(store, caller.account_id, [team_id], state, page)
    binding = _binding(caller, "team", state, page, team_id)
    return _participations_page(store, streams, binding, page, moving=moving)


def account_incidents(
    store: Store, caller: Caller, state: State, page: PageRequest
) -> IncidentPage:
    """Every incident of the caller's account in `state` (GSI2, weighted shards per state)."""
    page.filter.require_state(state)  # before any read
    family = Family.of_state(state)
    meta = store.shards.meta(caller.account_id, family)
    base = family.base(caller.account_id)
    options = page.filter.stream_options("")
    streams = gsi2_streams(store, base, meta.read_count, page.window, options)
    return fanout_page(
        store,
        streams,
        _binding(caller, "account", state, page),
        page,
        identity=lambda item: item["id"]["S"],
        convert=lambda item: from_item(IncidentSummary, item),
        items_moving=store.shards.counts(family).items_may_move(meta),
    )


def _participant_streams(
    store: Store, account: str, participants: Sequence[str], state: State, page: PageRequest
) -> tuple[list[Stream], bool]:
    """The GSI1 shards of `participants` that may hold items (every count each ever had),
    within the state and the page's window, and whether items may move between them (a
    halving's mover runs on one of their keys). Their maps are read in one round trip."""
    metas = store.counts.get_many([participant_meta(account, p) for p in participants])
    in_state = page.window.sort_range(f"{state.value}#")
    streams = [
        Stream(
            store.table_name,
            "GSI1PK",
            pk,
            "GSI1SK",
            in_state,
            index_name="GSI1",
            **page.filter.stream_options("incident_"),
        )
        for participant, meta in zip(participants, metas, strict=True)
        for pk in shard_keys(participant_base(account, participant), meta.read_count)
    ]
    return streams, any(store.counts.items_may_move(meta) for meta in metas)


def _participations_page(
    store: Store, streams: list[Stream], binding: str, page: PageRequest, *, moving: bool
) -> IncidentPage:
    return fanout_page(
        store,
        streams,
        binding,
        page,
        identity=lambda item: item["incident_id"]["S"],
        convert=lambda item: participation_from_item(item).incident,
        items_moving=moving,
    )


def gsi2_streams(
    store: Store, base: str, count: int, window: CreatedWindow, options: dict[str, Any]
) -> list[Stream]:
    """One stream per shard of `base` on GSI2, within `window` (on the time the sort keys
    start with), filtered by `options` (`Stream` fields)."""
    return [
        Stream(
            store.table_name,
            "GSI2PK",
            pk,
            "GSI2SK",
            window.sort_range(""),
            index_name="GSI2",
            **options,
        )
        for pk in shard_keys(base, count)
    ]


def fanout_page(
    store: Store,
    streams: Sequence[Stream],
    binding: str,
    page: PageRequest,
    *,
    identity: Callable[[Item], str],
    convert: Callable[[Item], T],
    items_moving: bool = False,
) -> ListPage[T]:
    """One page of `streams` merged in order through the fan-out engine, each item once
    (by `identity`) and as `convert` makes it (`items_moving`: a halving's mover runs on
    one of the streams' keys, `dynashard.resharding.mover`)."""
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
    )
    result = store.engine.page(query)
    return ListPage(
        items=[convert(item) for item in result.items],
        next_cursor=result.next_cursor,
        has_more=result.has_more,
        stats=result.stats,
    )


def partition_page(
    store: Store,
    partition: tuple[str, SortKeyRange],
    binding: str,
    page: PageRequest,
    convert: Callable[[Item], T],
) -> ListPage[T]:
    """One partition of the table (its ``PK`` and a range of its ``SK``s) paged like every
    list: the same cursor, budget and order."""
    pk, sort_range = partition
    stream = Stream(store.table_name, "PK", pk, "SK", sort_range)
    return fanout_page(
        store, [stream], binding, page, identity=lambda item: item["SK"]["S"], convert=convert
    )


def _binding(caller: Caller, route: str, state: State, page: PageRequest, *filters: str) -> str:
    """Everything a cursor is valid for: account, caller, route, state, window and filters."""
    parts = [caller.account_id, caller.user_id, route, state.value, *page.window.binding()]
    parts += page.filter.binding()
    return "\x1f".join([*parts, *filters])
