"""``make dev``'s demo contact methods and notification rules, for the first demo user (the
one the docs sign in as), so each contact route's example works as prefilled: a method and
a rule to read and replace, a scratch method and rule to delete, a method waiting for the
code shown in the verify example, and one whose code may be sent again (its last code sent
two minutes before start: at most one a minute)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from incidents.contacts import commands
from incidents.contacts.messages import pending_verification_message
from incidents.contacts.models import ContactMethodBody, NotificationRuleBody
from incidents.store import Caller, Store
from local.demo.data import DemoAccount

WORK, SCRATCH, VERIFY, RESEND = "Work email", "Scratch (delete me)", "Verify me", "Send again"
SCRATCH_DELAY = 1440
"""The scratch rule's delay: how the demo tells it from the rules people made."""
CODE = re.compile(r"\b\d{6}\b")


@dataclass(frozen=True)
class DemoContacts:
    """What the contact routes' examples name."""

    user_id: str
    method: str
    rule: str
    scratch_method: str
    scratch_rule: str
    verify_method: str
    code: str
    resend_method: str


def method_body(account: DemoAccount, label: str, tag: str = "") -> dict[str, Any]:
    """An email method of the first demo user (`tag`: a plus-address part that makes it an
    address of its own)."""
    address = f"{label.split(maxsplit=1)[0].lower()}{tag and '+' + tag}@example.com"
    return {"contact_method": {"type": "email_contact_method", "label": label,
                               "address": address}}  # fmt: skip


def rule_body(method_id: str, delay: int = 0) -> dict[str, Any]:
    """A high-urgency rule on `method_id`."""
    return {"notification_rule": {"start_delay_in_minutes": delay, "urgency": "high",
                                  "contact_method": {"id": method_id,
                                                     "type": "email_contact_method"}}}  # fmt: skip


def demo_contacts(store: Store, account: DemoAccount) -> DemoContacts:
    """The first user's demo methods and rules: kept ones made where missing, the scratch,
    verify and resend ones made afresh."""
    me = Caller(account.account_id, account.users[0].id)
    listed = {
        m.label: m.id for m in commands.list_contact_methods(store, me, me.user_id).contact_methods
    }
    for label in (SCRATCH, VERIFY, RESEND):
        if label in listed:
            commands.delete_contact_method(store, me, me.user_id, listed.pop(label))
    method = listed.get(WORK) or _method(store, me, account, WORK)
    rules = commands.list_notification_rules(store, me, me.user_id).notification_rules
    for scratch in (r for r in rules if r.start_delay_in_minutes == SCRATCH_DELAY):
        commands.delete_notification_rule(store, me, me.user_id, scratch.id)
    kept = [r.id for r in rules if r.contact_method.id == method and r.start_delay_in_minutes == 0]
    rule = kept[0] if kept else _rule(store, me, method, 0)
    now = store.clock()
    store.clock = lambda: now - timedelta(minutes=2)  # its code sent before start
    try:
        resend = _method(store, me, account, RESEND)
    finally:
        store.clock = lambda: now
    verify = _method(store, me, account, VERIFY)
    message = pending_verification_message(store, me.account_id, me.user_id, verify)
    found = CODE.search(message.body if message else "")
    return DemoContacts(
        me.user_id, method, rule, _method(store, me, account, SCRATCH),
        _rule(store, me, method, SCRATCH_DELAY), verify, found.group() if found else "",
        resend,
    )  # fmt: skip


def _method(store: Store, me: Caller, account: DemoAccount, label: str) -> str:
    """A method made for the demo; those made afresh at each start get an address of that
    start, as one address gets only 5 codes a day and a kept table is started again."""
    tag = "" if label == WORK else store.clock().strftime("%Y%m%d%H%M%S")
    body = ContactMethodBody.model_validate(method_body(account, label, tag))
    made = commands.create_contact_method(store, me, me.user_id, body, check_url=lambda _: None)
    return made.id


def _rule(store: Store, me: Caller, method: str, delay: int) -> str:
    body = NotificationRuleBody.model_validate(rule_body(method, delay))
    return commands.create_notification_rule(store, me, me.user_id, body).id
