"""Users of an account. Identity comes from the authorizer; the profile is what others see.

A profile lives in the user's partition (beside their memberships) and, as seed 002 lists
users, in the account's user list (``<acct>#user``), written together in one transaction so
``GET /users`` reads one partition. The account's first user is its owner: their first save
also writes the list's owner item, which only one save can create.
"""

from __future__ import annotations

from collections.abc import Sequence

from dynashard import SortKeyRange
from dynashard.query import Item
from incidents.contacts.defaults import first_contact_items
from incidents.errors import DomainError, ForbiddenError, NotFoundError
from incidents.items import from_item, to_item
from incidents.keys import OWNER_SK, PROFILE_SK, USER_PREFIX, user_partition, users_partition
from incidents.models import User, UserRole
from incidents.paging import ListPage, PageRequest, partition_page
from incidents.requests import SaveProfile, UserPatch
from incidents.store import Caller, Failure, Store
from incidents.table import PK, SK

SAVE_ATTEMPTS = 3
"""A first save that raced another first save of the same user reads and saves again."""


class OwnerRoleError(DomainError):
    """The owner is the account's first user: the role is neither given nor taken by a
    change of profile."""

    code = "validation_error"


class _OwnerTakenError(DomainError):
    """The account already has its owner (a first save tries to be it)."""


class _SavedMeanwhileError(DomainError):
    """The profile was created by a concurrent save."""


def save_profile(store: Store, caller: Caller, request: SaveProfile) -> User:
    """Create or replace the caller's name and email (their time zone and role kept); the
    account's first user becomes its owner."""
    for _ in range(SAVE_ATTEMPTS):
        saved = _read(store, caller.account_id, caller.user_id)
        if saved is not None:
            user = saved.model_copy(update={"name": request.name, "email": request.email})
            _write(store, caller.account_id, user)
            return user
        user = User(id=caller.user_id, name=request.name, email=request.email)
        try:
            return _create(store, caller.account_id, user)
        except _SavedMeanwhileError:
            continue
    raise _SavedMeanwhileError(f"user {caller.user_id} was saved concurrently; retry")


def _create(store: Store, account: str, user: User) -> User:
    """A new profile, as the owner if the account has none yet, with its first contact
    method and notification rule (`incidents.contacts.defaults`)."""
    owner = user.model_copy(update={"role": UserRole.OWNER})
    claim = store.put_operation(owner_item(account, user.id), new=True)
    taken = _OwnerTakenError("the account has an owner")
    contacts = [(item, None) for item in first_contact_items(store, account, user)]
    try:
        _write(store, account, owner, new=True, also=[*contacts, (claim, taken)])
        return owner
    except _OwnerTakenError:
        _write(store, account, user, new=True, also=contacts)
        return user


def _write(
    store: Store,
    account: str,
    user: User,
    *,
    new: bool = False,
    also: Sequence[tuple[Item, Failure]] = (),
) -> None:
    """The profile and its list item in one transaction (`new`: only if there is none),
    with `also` (operations, and the error each one's failed condition raises)."""
    meanwhile = _SavedMeanwhileError(f"user {user.id} was saved concurrently")
    operations = [
        (store.put_operation(profile_item(account, user), new=new), meanwhile if new else None),
        (store.put_operation(listed_item(account, user)), None),
        *also,
    ]
    store.transact([op for op, _ in operations], [failure for _, failure in operations])


def profile_item(account: str, user: User) -> Item:
    """A user's profile, beside their memberships in the user's partition."""
    return to_item(user, "user", {PK: user_partition(account, user.id), SK: PROFILE_SK})


def listed_item(account: str, user: User) -> Item:
    """A user as the account's user list holds them."""
    return to_item(user, "listed_user", {PK: users_partition(account), SK: user.id})


def owner_item(account: str, user_id: str) -> Item:
    """The account list's record of its owner."""
    return {
        PK: {"S": users_partition(account)},
        SK: {"S": OWNER_SK},
        "Type": {"S": "owner"},
        "user_id": {"S": user_id},
    }


def user_exists_check(store: Store, account: str, user_id: str) -> tuple[Item, NotFoundError]:
    """A transaction's check that `user_id` is a user of `account`, and the 404 if not.

    A user belongs to an account once they have a profile there (``PUT /me``, or the
    provisioning that creates their login): only then can they be assigned, added to an
    incident or made a team member.
    """
    check = store.exists_check(user_partition(account, user_id), PROFILE_SK)
    return check, NotFoundError(f"user {user_id} not found in this account")


def _read(store: Store, account: str, user_id: str) -> User | None:
    item = store.get(user_partition(account, user_id), PROFILE_SK)
    return None if item is None else from_item(User, item)


def get_profile(store: Store, caller: Caller, user_id: str) -> User:
    """A user's profile in the caller's account; 404 if they never saved one."""
    user = _read(store, caller.account_id, user_id)
    if user is None:
        raise NotFoundError(f"user {user_id} has no profile")
    return user


def list_users(store: Store, caller: Caller, page: PageRequest) -> ListPage[User]:
    """A page of the account's users, by id (oldest first: ids are time-ordered)."""
    partition = (users_partition(caller.account_id), SortKeyRange.begins_with(USER_PREFIX))
    binding = "\x1f".join([caller.account_id, "users"])
    return partition_page(store, partition, binding, page, lambda item: from_item(User, item))


def update_user(store: Store, caller: Caller, user_id: str, patch: UserPatch) -> User:
    """`patch` applied to a user of the caller's account: a person changes their own name
    and time zone; an owner or admin anyone's, and roles (never to or from owner); an API
    key names and time zones, never roles."""
    account = caller.account_id
    user = get_profile(store, caller, user_id)
    changes = patch.model_dump(include=patch.model_fields_set)
    _allowed(store, caller, user, patch)
    changed = user.model_copy(update=changes)
    _write(store, account, changed)
    return changed


def _allowed(store: Store, caller: Caller, user: User, patch: UserPatch) -> None:
    """Refuse a change the caller may not make, saying who may."""
    role = patch.role
    if role is not None and role != user.role and UserRole.OWNER in (role, user.role):
        raise OwnerRoleError(
            "role: the owner is the account's first user; owner is neither given nor "
            "taken by a change of role"
        )
    if not caller.takes_part:  # an API key: its scope decided; roles need a person
        if patch.role is not None:
            raise ForbiddenError("role: only an owner or admin, signed in, changes roles")
        return
    if caller.user_id == user.id and patch.role is None:
        return
    _require_manager(
        store,
        caller,
        "only an owner or admin changes another user's profile or a role; "
        "change your own name and time_zone",
    )


def require_self_or_manager(store: Store, caller: Caller, user_id: str) -> None:
    """Refuse a person acting on another user's behalf unless an owner or admin (an API
    key: its scope decided)."""
    if caller.takes_part and caller.user_id != user_id:
        _require_manager(store, caller, "only the user, or an owner or admin, does this")


def _require_manager(store: Store, caller: Caller, refusal: str) -> None:
    me = _read(store, caller.account_id, caller.user_id)
    if me is None or not me.role.manages_users:
        raise ForbiddenError(refusal)
