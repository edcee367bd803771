"""Teams and people over HTTP: create teams, list mine, members, the account's users and
their profiles."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path

from incidents import team_commands as commands
from incidents import users
from incidents.models import TEAM_ID, USER_ID, Membership, Team, TeamList, User, UserList
from incidents.paging import DEFAULT_LIMIT, PageRequest
from incidents.requests import AddMember, CreateTeam, SaveProfile, UserPatch
from lambdas.http.admission import caller
from lambdas.http.api import answer, lambda_handler, new_resolver, no_content, route
from lambdas.http.params import Cursor, Limit
from lambdas.runtime import store

TeamId = Annotated[str, Path(pattern=TEAM_ID)]
UserId = Annotated[str, Path(pattern=USER_ID)]

app = new_resolver()


@route(app, "create_team")
def create_team(body: CreateTeam) -> Response[Team]:
    """A new team with me as its first member."""
    team = commands.create_team(store(), caller(), body)
    return answer(app, team, status=201, location=f"/teams/{team.id}")


@route(app, "my_teams")
def my_teams() -> TeamList:
    """The teams I am a member of."""
    return TeamList(items=commands.my_teams(store(), caller()))


@route(app, "add_member")
def add_member(team_id: TeamId, body: AddMember) -> Response[Membership]:
    """Add a user to one of my teams."""
    added = commands.add_member(store(), caller(), team_id, body)
    return answer(app, added, status=201, location=f"/teams/{team_id}/members/{added.user_id}")


@route(app, "remove_member")
def remove_member(team_id: TeamId, user_id: UserId) -> Response[None]:
    """Remove a user (or myself) from one of my teams."""
    commands.remove_member(store(), caller(), team_id, user_id)
    return no_content()


@route(app, "save_profile")
def save_profile(body: SaveProfile) -> User:
    """Create or replace my profile."""
    return users.save_profile(store(), caller(), body)


@route(app, "get_profile")
def get_profile(user_id: UserId) -> User:
    """A user's profile in my account."""
    return users.get_profile(store(), caller(), user_id)


@route(app, "list_users")
def list_users(*, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> UserList:
    """The account's users, by id."""
    page = users.list_users(store(), caller(), PageRequest(limit, cursor, descending=False))
    return UserList(items=page.items, next_cursor=page.next_cursor, has_more=page.has_more)


@route(app, "update_user")
def update_user(user_id: UserId, body: UserPatch) -> User:
    """Change a user's name, time zone (mine, or anyone's as an owner or admin) or role (as
    an owner or admin)."""
    return users.update_user(store(), caller(), user_id, body)


handler = lambda_handler(app)
