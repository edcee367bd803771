"""Users for tests: an id becomes a user of an account once it has a profile there."""

from __future__ import annotations

from incidents.requests import SaveProfile
from incidents.store import Caller, Store, new_id
from incidents.users import save_profile
from tests.helpers.api_harness import Api


def new_user(store: Store, account: str, name: str = "Test User") -> str:
    """A fresh user id with a profile in `account`, through the service."""
    user_id = new_id("user")
    save_profile(store, Caller(account, user_id), SaveProfile(name=name))
    return user_id


def new_api_user(api: Api, account: str, name: str = "Test User") -> Caller:
    """A fresh caller in `account` with a profile, through ``PUT /me``."""
    caller = Caller(account, new_id("user"))
    reply = api.call("save_profile", caller, body={"name": name})
    assert reply.status == 200, reply.body
    return caller
