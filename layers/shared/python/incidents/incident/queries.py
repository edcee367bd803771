"""Incident lists, all through the fan-out engine: ordered (newest or oldest first),
deduplicated.

Each list is a fan-out over sharded partitions (a participant's GSI1 shards, several
teams' shards, or the account's GSI2 shards for a state). The cursor binding names the
account, the caller, the route and every filter, so a cursor only pages the list it came
from.
"""

from __future__ import annotations

from collections.abc import Sequence

from dynashard import PartitionStream, shard_keys
from incidents.errors import ForbiddenError, TooManyTeamsError
from incidents.items import from_item, participation_from_item
from incidents.keys import participant_base, participant_meta
from incidents.models import IncidentSummary, State
from incidents.paging import ListPage, PageRequest, fanout_page, gsi2_streams
from incidents.store import Caller, Store
from incidents.table import GSI1
from incidents.team_commands import my_team_ids, require_member
from incidents.tenant_shards import Family

MAX_TEAMS = 100
"""Teams one "all my teams" page reads (each a stream or more, every one read by the
page's first wave): a member of more names up to this many with ``team=``."""


IncidentPage = ListPage[IncidentSummary]


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
    return _participations_page(
        store, streams, binding, page, moving=moving, teams_read_anew=not team_ids
    )


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
) -> tuple[list[PartitionStream], bool]:
    """The GSI1 shards of `participants` that may hold items (every count each ever had),
    within the state and the page's window, and whether items may move between them (a
    halving's mover runs on one of their keys). Their maps are read in one round trip."""
    metas = store.counts.get_many([participant_meta(account, p) for p in participants])
    in_state = page.window.sort_range(f"{state.value}#")
    streams = [
        PartitionStream(
            store.table_name,
            GSI1.partition_key,
            pk,
            GSI1.sort_key,
            in_state,
            index_name=GSI1.name,
            **page.filter.stream_options("incident_"),
        )
        for participant, meta in zip(participants, metas, strict=True)
        for pk in shard_keys(participant_base(account, participant), meta.read_count)
    ]
    return streams, any(store.counts.items_may_move(meta) for meta in metas)


def _participations_page(
    store: Store,
    streams: list[PartitionStream],
    binding: str,
    page: PageRequest,
    *,
    moving: bool,
    teams_read_anew: bool = False,
) -> IncidentPage:
    """A page of participations (`teams_read_anew`: the caller's teams, read each page)."""
    return fanout_page(
        store,
        streams,
        binding,
        page,
        identity=lambda item: item["incident_id"]["S"],
        convert=lambda item: participation_from_item(item).incident,
        items_moving=moving,
        streams_may_change=teams_read_anew,
    )


def _binding(caller: Caller, route: str, state: State, page: PageRequest, *filters: str) -> str:
    """Everything a cursor is valid for: account, caller, route, state, window and filters."""
    parts = [caller.account_id, caller.user_id, route, state.value, *page.window.binding()]
    parts += page.filter.binding()
    return "\x1f".join([*parts, *filters])
