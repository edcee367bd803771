"""Teams: create, add and remove members, list mine; membership gates a team's lists."""

from __future__ import annotations

from dynashard.query import Item
from incidents.errors import ConflictError, ForbiddenError, LastMemberError, NotFoundError
from incidents.items import from_item, to_item
from incidents.keys import (
    membership_sort_key,
    team_members_partition,
    teams_partition,
    user_partition,
)
from incidents.models import Membership, Team, timestamp
from incidents.requests import AddMember, CreateTeam
from incidents.store import Caller, Store, new_id
from incidents.table import GSI1, PK, SK
from incidents.users import user_exists_check

MEMBER_PREFIX = "member#"
MEMBER_COUNT = "member_count"
"""On the team item: its members, kept by the membership transactions."""


def create_team(store: Store, caller: Caller, request: CreateTeam) -> Team:
    """A new team with the caller as its first member (an API key makes it with none: it
    is no member, and people are added next)."""
    now = timestamp(store.clock())
    team = Team(id=new_id("team"), name=request.name, created_by=caller.user_id, created_at=now)
    if not caller.takes_part:
        team_put = store.put_operation(team_item(caller.account_id, team, members=0), new=True)
        store.transact([team_put], [None])
        return team
    membership = Membership(team_id=team.id, user_id=caller.user_id, added_at=now)
    store.transact(
        [
            store.put_operation(team_item(caller.account_id, team, members=1), new=True),
            store.put_operation(membership_item(caller.account_id, membership), new=True),
        ],
        [None, None],
    )
    return team


def add_member(store: Store, caller: Caller, team_id: str, request: AddMember) -> Membership:
    """Add a user to a team the caller belongs to; 409 if already a member."""
    require_member(store, caller, team_id)
    membership = Membership(
        team_id=team_id, user_id=request.user_id, added_at=timestamp(store.clock())
    )
    user_check, no_user = user_exists_check(store, caller.account_id, request.user_id)
    store.transact(
        [
            store.put_operation(membership_item(caller.account_id, membership), new=True),
            _member_joins(store, caller.account_id, team_id),
            user_check,
        ],
        [
            ConflictError(f"{request.user_id} is already a member of {team_id}"),
            NotFoundError(f"team {team_id} not found"),
            no_user,
        ],
    )
    return membership


def remove_member(store: Store, caller: Caller, team_id: str, user_id: str) -> None:
    """Remove a user from a team the caller belongs to (the caller may remove themself),
    never its last member: a team without members could be read and managed by no one, yet
    incidents could still be assigned to it (409 last_member)."""
    require_member(store, caller, team_id)
    account = caller.account_id
    store.transact(
        [
            store.delete_operation(user_partition(account, user_id), membership_sort_key(team_id)),
            _member_leaves(store, account, team_id),
        ],
        [
            NotFoundError(f"{user_id} is not a member of {team_id}"),
            LastMemberError(f"{user_id} is the last member of {team_id}; a team keeps one"),
        ],
    )


def _member_joins(store: Store, account: str, team_id: str) -> Item:
    """The transaction's update of the team's `MEMBER_COUNT` for one member more."""
    counted, _ = _members_counted(store, account, team_id)
    return store.counter_update(
        teams_partition(account), team_id, (MEMBER_COUNT, 1), counted=counted
    )


def _member_leaves(store: Store, account: str, team_id: str) -> Item:
    """The transaction's update of the team's `MEMBER_COUNT` for one member less; its
    condition fails unless a member stays."""
    counted, stored = _members_counted(store, account, team_id)
    key, counter = (teams_partition(account), team_id), (MEMBER_COUNT, -1)
    if not stored and counted > 1:  # still uncounted as read: the count is written now
        condition = " AND attribute_not_exists(#n)"
        return store.counter_update(*key, counter, counted=counted, condition=condition)
    condition = " AND #n > :one"  # also fails on a team never counted: none would stay
    return store.counter_update(
        *key, counter, counted=counted, condition=condition, values={":one": 1}
    )


def _members_counted(store: Store, account: str, team_id: str) -> tuple[int, bool]:
    """The team's members and whether the team item holds that count (404 without the
    team): a team written before `MEMBER_COUNT` existed is counted from its memberships
    (GSI1), and gets the count in the transaction."""
    team = store.get(teams_partition(account), team_id)
    if team is None:
        raise NotFoundError(f"team {team_id} not found")
    if MEMBER_COUNT in team:
        return int(team[MEMBER_COUNT]["N"]), True
    members: int = store.client.query(
        TableName=store.table_name,
        IndexName=GSI1.name,
        KeyConditionExpression=f"{GSI1.partition_key} = :team",
        ExpressionAttributeValues={":team": {"S": team_members_partition(account, team_id)}},
        Select="COUNT",
    )["Count"]
    return members, False


def my_team_ids(store: Store, caller: Caller) -> list[str]:
    """Ids of the caller's teams, by a strongly consistent query of their memberships."""
    items = store.query_partition(
        user_partition(caller.account_id, caller.user_id), prefix=MEMBER_PREFIX
    )
    return [from_item(Membership, item).team_id for item in items]


def my_teams(store: Store, caller: Caller) -> list[Team]:
    """The caller's teams (one query and one batch read per 100 teams)."""
    partition = teams_partition(caller.account_id)
    items = store.batch_get([(partition, team_id) for team_id in my_team_ids(store, caller)])
    return sorted((from_item(Team, item) for item in items), key=lambda team: team.name)


def require_member(store: Store, caller: Caller, team_id: str) -> None:
    """403 unless the caller is a member of `team_id` (404 if the team does not exist). An
    API key is no member: its scope, which the handler checked, lets it act on every team
    of its account."""
    if caller.takes_part and store.get(
        user_partition(caller.account_id, caller.user_id), membership_sort_key(team_id)
    ):
        return
    if not caller.takes_part and store.get(teams_partition(caller.account_id), team_id):
        return
    if store.get(teams_partition(caller.account_id), team_id) is None:
        raise NotFoundError(f"team {team_id} not found")
    raise ForbiddenError(f"you are not a member of team {team_id}")


def team_item(account: str, team: Team, *, members: int) -> Item:
    """A team as stored in the account's team partition, with how many members it has
    (kept in the membership transactions, so the last one cannot leave)."""
    item = to_item(team, "team", {PK: teams_partition(account), SK: team.id})
    item[MEMBER_COUNT] = {"N": str(members)}
    return item


def membership_item(account: str, membership: Membership) -> Item:
    """A membership: under the user (their teams) and in GSI1 under the team (its members)."""
    return to_item(
        membership,
        "membership",
        {
            PK: user_partition(account, membership.user_id),
            SK: membership_sort_key(membership.team_id),
            GSI1.partition_key: team_members_partition(account, membership.team_id),
            GSI1.sort_key: membership.user_id,
        },
    )
