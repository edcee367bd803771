"""User profiles. Identity comes from the authorizer; the profile is what others see."""

from __future__ import annotations

from dynashard.query import Item
from incidents.errors import NotFoundError
from incidents.items import from_item, to_item
from incidents.keys import PROFILE_SK, user_partition
from incidents.models import User
from incidents.requests import SaveProfile
from incidents.store import Caller, Store
from incidents.table import PK, SK


def save_profile(store: Store, caller: Caller, request: SaveProfile) -> User:
    """Create or replace the caller's profile."""
    user = User(id=caller.user_id, name=request.name, email=request.email)
    store.client.put_item(TableName=store.table_name, Item=profile_item(caller.account_id, user))
    return user


def profile_item(account: str, user: User) -> Item:
    """A user's profile, beside their memberships in the user's partition."""
    return to_item(user, "user", {PK: user_partition(account, user.id), SK: PROFILE_SK})


def user_exists_check(store: Store, account: str, user_id: str) -> tuple[Item, NotFoundError]:
    """A transaction's check that `user_id` is a user of `account`, and the 404 if not.

    A user belongs to an account once they have a profile there (``PUT /me``, or the
    provisioning that creates their login): only then can they be assigned, added to an
    incident or made a team member.
    """
    check = store.exists_check(user_partition(account, user_id), PROFILE_SK)
    return check, NotFoundError(f"user {user_id} not found in this account")


def get_profile(store: Store, caller: Caller, user_id: str) -> User:
    """A user's profile in the caller's account; 404 if they never saved one."""
    item = store.get(user_partition(caller.account_id, user_id), PROFILE_SK)
    if item is None:
        raise NotFoundError(f"user {user_id} has no profile")
    return from_item(User, item)
