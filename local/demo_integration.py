"""``make dev``'s demo integration: one per first demo account, routed to its first team,
so ``make dev`` can print a key (``$INTEGRATION_KEY``) and a curl line that triggers an
alert. Keys are stored hashed: on a kept table the earlier ``make dev``'s integration (found
by its name) gets a new key, which is the one printed."""

from __future__ import annotations

from dataclasses import dataclass

from incidents.alerts.integrations import create_integration, list_integrations, rotate_key
from incidents.alerts.models import NewIntegration
from incidents.store import Caller, Store
from local.demo_data import DemoAccount

NAME = "make dev"


@dataclass(frozen=True)
class DemoIntegration:
    """The account's ``make dev`` integration and a working key of it."""

    id: str
    key: str


def demo_integration(store: Store, account: DemoAccount) -> DemoIntegration:
    """The account's ``make dev`` integration, with a key that works now."""
    caller = Caller(account.account_id, account.users[0].id)
    for integration in list_integrations(store, caller):
        if integration.name == NAME:
            return DemoIntegration(integration.id, rotate_key(store, caller, integration.id).key)
    request = NewIntegration(name=NAME, team_id=account.teams[0].id)
    created = create_integration(store, caller, request)
    return DemoIntegration(created.id, created.key)
