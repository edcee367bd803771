"""Teams and people over HTTP: create teams, list mine, members, the account's users,
their profiles, contact methods and notification rules."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path

from incidents import team_commands as commands
from incidents import users
from incidents.contacts import commands as contacts
from incidents.contacts.models import (
    CONTACT_METHOD_ID,
    NOTIFICATION_RULE_ID,
    ContactMethodAnswer,
    ContactMethodBody,
    ContactMethodList,
    NotificationRuleAnswer,
    NotificationRuleBody,
    NotificationRuleList,
    VerificationAnswer,
    VerificationCode,
)
from incidents.models import TEAM_ID, USER_ID, Membership, Team, TeamList, User, UserList
from incidents.paging import DEFAULT_LIMIT, PageRequest
from incidents.requests import AddMember, CreateTeam, SaveProfile, UserPatch
from lambdas.http.admission import caller
from lambdas.http.api import answer, lambda_handler, new_resolver, no_content, route
from lambdas.http.params import Cursor, Limit
from lambdas.runtime import endpoint_policy, store

TeamId = Annotated[str, Path(pattern=TEAM_ID)]
UserId = Annotated[str, Path(pattern=USER_ID)]
ContactMethodId = Annotated[str, Path(pattern=CONTACT_METHOD_ID)]
NotificationRuleId = Annotated[str, Path(pattern=NOTIFICATION_RULE_ID)]

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


@route(app, "list_contact_methods")
def list_contact_methods(user_id: UserId) -> ContactMethodList:
    """A user's contact methods (mine, or anyone's as an owner or admin)."""
    return contacts.list_contact_methods(store(), caller(), user_id)


@route(app, "create_contact_method")
def create_contact_method(
    user_id: UserId, body: ContactMethodBody
) -> Response[ContactMethodAnswer]:
    """Add one of my contact methods: unverified until its code comes back."""
    made = contacts.create_contact_method(
        store(), caller(), user_id, body, check_url=endpoint_policy().check_url
    )
    location = f"/users/{user_id}/contact-methods/{made.id}"
    return answer(app, ContactMethodAnswer(contact_method=made), status=201, location=location)


@route(app, "get_contact_method")
def get_contact_method(user_id: UserId, contact_method_id: ContactMethodId) -> ContactMethodAnswer:
    """One contact method."""
    found = contacts.get_contact_method(store(), caller(), user_id, contact_method_id)
    return ContactMethodAnswer(contact_method=found)


@route(app, "replace_contact_method")
def replace_contact_method(
    user_id: UserId, contact_method_id: ContactMethodId, body: ContactMethodBody
) -> ContactMethodAnswer:
    """Replace one of my contact methods' label, address and enabled."""
    replaced = contacts.replace_contact_method(
        store(),
        caller(),
        user_id,
        contact_method_id,
        body,
        check_url=endpoint_policy().check_url,
    )
    return ContactMethodAnswer(contact_method=replaced)


@route(app, "delete_contact_method")
def delete_contact_method(user_id: UserId, contact_method_id: ContactMethodId) -> Response[None]:
    """Delete one of my contact methods, with its notification rules."""
    contacts.delete_contact_method(store(), caller(), user_id, contact_method_id)
    return no_content()


@route(app, "verify_contact_method")
def verify_contact_method(
    user_id: UserId, contact_method_id: ContactMethodId, body: VerificationCode
) -> ContactMethodAnswer:
    """Verify one of my contact methods with the code its message carried."""
    verified = contacts.verify_contact_method(store(), caller(), user_id, contact_method_id, body)
    return ContactMethodAnswer(contact_method=verified)


@route(app, "send_contact_method_verification")
def send_contact_method_verification(
    user_id: UserId, contact_method_id: ContactMethodId
) -> Response[VerificationAnswer]:
    """A new code for one of my unverified contact methods (its message waits for the
    delivery channels)."""
    made = contacts.send_verification(store(), caller(), user_id, contact_method_id)
    return answer(app, VerificationAnswer(verification=made), status=202)


@route(app, "list_notification_rules")
def list_notification_rules(user_id: UserId) -> NotificationRuleList:
    """A user's notification rules (mine, or anyone's as an owner or admin)."""
    return contacts.list_notification_rules(store(), caller(), user_id)


@route(app, "create_notification_rule")
def create_notification_rule(
    user_id: UserId, body: NotificationRuleBody
) -> Response[NotificationRuleAnswer]:
    """Add one of my notification rules, for one of my contact methods."""
    made = contacts.create_notification_rule(store(), caller(), user_id, body)
    location = f"/users/{user_id}/notification-rules/{made.id}"
    return answer(
        app, NotificationRuleAnswer(notification_rule=made), status=201, location=location
    )


@route(app, "get_notification_rule")
def get_notification_rule(
    user_id: UserId, notification_rule_id: NotificationRuleId
) -> NotificationRuleAnswer:
    """One notification rule."""
    found = contacts.get_notification_rule(store(), caller(), user_id, notification_rule_id)
    return NotificationRuleAnswer(notification_rule=found)


@route(app, "replace_notification_rule")
def replace_notification_rule(
    user_id: UserId, notification_rule_id: NotificationRuleId, body: NotificationRuleBody
) -> NotificationRuleAnswer:
    """Replace one of my notification rules."""
    replaced = contacts.replace_notification_rule(
        store(), caller(), user_id, notification_rule_id, body
    )
    return NotificationRuleAnswer(notification_rule=replaced)


@route(app, "delete_notification_rule")
def delete_notification_rule(
    user_id: UserId, notification_rule_id: NotificationRuleId
) -> Response[None]:
    """Delete one of my notification rules."""
    contacts.delete_notification_rule(store(), caller(), user_id, notification_rule_id)
    return no_content()


handler = lambda_handler(app)
