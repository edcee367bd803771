"""What the paging engine reads of a user: the ways to reach them for an incident of one
urgency, in the order their rules fire. Only enabled, verified methods are listed: an
unverified method receives nothing but its code."""

from __future__ import annotations

from dataclasses import dataclass

from incidents.contacts.models import ContactMethod, NotificationRule, Urgency
from incidents.contacts.stored import read_methods, read_rules
from incidents.store import Store


@dataclass(frozen=True)
class Deliverable:
    """One rule that applies, with the method it reaches the user through."""

    rule: NotificationRule
    method: ContactMethod


def deliverable_methods(
    store: Store, account: str, user_id: str, urgency: Urgency
) -> list[Deliverable]:
    """The user's rules of `urgency` whose method is enabled and verified, by start delay
    (then by rule id: the order they were made), each with its method; two Queries."""
    usable = {
        method.id: method.shown()
        for method in read_methods(store, account, user_id)
        if method.verified and method.enabled
    }
    applying = [
        Deliverable(rule, usable[rule.contact_method.id])
        for rule in read_rules(store, account, user_id)
        if rule.urgency is urgency and rule.contact_method.id in usable
    ]
    return sorted(applying, key=lambda d: (d.rule.start_delay_in_minutes, d.rule.id))
