"""``make dev``'s demo machine access for the first demo account: an integration routed to
its first team and paging by the demo escalation policy, so ``make dev`` can print a key
(``$INTEGRATION_KEY``) and a curl line that triggers an alert, and an incident it opened
(paging, to escalate or reassign); a heartbeat it pings
(`DEMO_HEARTBEAT`, daily, so it never expires while you look); an API key (``$API_KEY``,
reading incidents); and two maintenance windows on its last team (one on now, one
scheduled) for the document's examples. Keys are stored hashed: on a kept table the
earlier ``make dev``'s integration (found by its name) gets a new key, and its API key is
revoked for a new one; the printed keys are the new ones."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from incidents.access.api_keys import create_api_key, list_api_keys, revoke_api_key
from incidents.access.models import NewApiKey
from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import (
    authenticate,
    create_integration,
    list_integrations,
    rotate_key,
)
from incidents.alerts.models import ALERT_EVENTS, NewIntegration
from incidents.errors import ConflictError
from incidents.heartbeats.commands import create_heartbeat
from incidents.heartbeats.models import IntervalUnit, NewHeartbeat
from incidents.maintenance.commands import create_window, delete_window, end_window, list_windows
from incidents.maintenance.models import NewMaintenanceWindow, WindowStatus
from incidents.store import Caller, Store
from local.demo.data import DemoAccount

NAME = "make dev"
DEMO_HEARTBEAT = "demo-heartbeat"


@dataclass(frozen=True)
class DemoKey:
    """The id of a ``make dev`` integration or API key, and a key of it that works now."""

    id: str
    key: str


def demo_integration(store: Store, account: DemoAccount, policy_id: str) -> DemoKey:
    """The account's ``make dev`` integration, with a key that works now; a new one pages
    by `policy_id` (its alerts' incidents email the first user, into the outbox)."""
    caller = Caller(account.account_id, account.users[0].id)
    for integration in list_integrations(store, caller):
        if integration.name == NAME:
            return DemoKey(integration.id, rotate_key(store, caller, integration.id).key)
    request = NewIntegration(name=NAME, team_id=account.teams[0].id, escalation_policy_id=policy_id)
    created = create_integration(store, caller, request)
    return DemoKey(created.id, created.key)


PAGED_DEDUP_KEY = "make-dev/paged"


def demo_paged_incident(store: Store, integration: DemoKey) -> str:
    """An incident opened by an alert of the demo integration, so it escalates by the demo
    policy (the escalate and reassign examples name it): the one still open from an
    earlier ``make dev``, or a new one."""
    caller, found = authenticate(store, integration.key)
    alert = ALERT_EVENTS.validate_python({
        "event_action": "trigger", "dedup_key": PAGED_DEDUP_KEY,
        "payload": {"summary": "make dev: a paged incident to escalate", "source": "make dev",
                    "severity": "error"},
    })  # fmt: skip
    incident = ingest_alert(store, caller, found, alert).incident_id
    assert incident is not None, "a trigger of an integration with no window opens one"
    return incident


def demo_heartbeat(store: Store, account: DemoAccount, integration: DemoKey) -> None:
    """The account's daily heartbeat, pinged with `integration`'s key (kept if it is there)."""
    caller = Caller(account.account_id, account.users[0].id)
    request = NewHeartbeat(
        name=DEMO_HEARTBEAT, interval=1, interval_unit=IntervalUnit.DAYS,
        integration_id=integration.id,
    )  # fmt: skip
    try:
        create_heartbeat(store, caller, request)
    except ConflictError:
        return


def demo_api_key(store: Store, account: DemoAccount) -> DemoKey:
    """A ``make dev`` API key of the account that reads incidents (an earlier one revoked)."""
    caller = Caller(account.account_id, account.users[0].id)
    for api_key in list_api_keys(store, caller):
        if api_key.name == NAME:
            revoke_api_key(store, caller, api_key.id)
    created = create_api_key(store, caller, NewApiKey(name=NAME, scopes=["incidents:read"]))
    return DemoKey(created.id, created.key)


@dataclass(frozen=True)
class DemoWindows:
    """The ids of ``make dev``'s maintenance windows: one on now (it can be ended), one
    scheduled (it can be deleted)."""

    ongoing: str
    scheduled: str


def demo_windows(store: Store, account: DemoAccount) -> DemoWindows:
    """Two windows on the account's last team (no demo integration is routed to it, so the
    demo's alerts still open incidents), a day long; an earlier ``make dev``'s are ended or
    deleted first, so a kept table does not gather live ones."""
    caller = Caller(account.account_id, account.users[0].id)
    cursor = None
    while True:
        page = list_windows(store, caller, limit=100, cursor=cursor)
        for window in page.items:
            if window.description == NAME and window.status is WindowStatus.ONGOING:
                end_window(store, caller, window.id)
            elif window.description == NAME and window.status is WindowStatus.SCHEDULED:
                delete_window(store, caller, window.id)
        if not page.has_more:
            break
        cursor = page.next_cursor
    now, day = store.clock(), timedelta(days=1)
    ids = [
        create_window(store, caller, NewMaintenanceWindow(
            team_id=account.teams[-1].id, start_time=start, end_time=start + day,
            description=NAME,
        )).id
        for start in (now, now + 30 * day)
    ]  # fmt: skip
    return DemoWindows(*ids)
