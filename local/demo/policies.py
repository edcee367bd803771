"""``make dev``'s demo escalation policy, and a scratch one the docs' delete example may
delete: both page the first demo user, then whoever the demo schedule has on call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from incidents.escalation import policies
from incidents.escalation.models import EscalationPolicyRequest
from incidents.store import Caller, Store
from local.demo.data import DemoAccount

DEMO_POLICY = "Checkout on-call"
SCRATCH = "Scratch policy (delete me)"


@dataclass(frozen=True)
class DemoPolicies:
    """The demo policy and the scratch one."""

    policy: str
    scratch: str


def policy_body(account: DemoAccount, schedule_id: str, name: str = DEMO_POLICY) -> dict[str, Any]:
    """A policy's request: the first user at once, the schedule's on-call after 5 minutes."""
    return {
        "name": name,
        "num_loops": 1,
        "escalation_rules": [
            {"escalation_delay_in_minutes": 5,
             "targets": [{"type": "user_reference", "id": account.users[0].id}]},
            {"escalation_delay_in_minutes": 15,
             "targets": [{"type": "schedule_reference", "id": schedule_id}]},
        ],
    }  # fmt: skip


def demo_policies(store: Store, account: DemoAccount, schedule_id: str) -> DemoPolicies:
    """The account's demo policy (made where missing) and a fresh scratch one."""
    caller = Caller(account.account_id, account.users[0].id)
    listed = {p.name: p.id for p in policies.list_policies(store, caller, limit=100).items}
    if SCRATCH in listed:
        policies.delete_policy(store, caller, listed[SCRATCH])

    def made(name: str) -> str:
        body = EscalationPolicyRequest.model_validate(policy_body(account, schedule_id, name))
        return policies.create_policy(store, caller, body).id

    return DemoPolicies(listed.get(DEMO_POLICY) or made(DEMO_POLICY), made(SCRATCH))
