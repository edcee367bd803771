"""What a new user starts with: their profile's email as a verified email method and a
high-urgency rule on it at 0 minutes, written in the transaction of their first save, so
nobody is on call without a way to reach them. PagerDuty makes the login email a contact
method the same way; the address came from the sign-in, so it is not sent a code."""

from __future__ import annotations

from dynashard.query import Item
from incidents.contacts.models import (
    ContactMethodReference,
    ContactMethodType,
    NotificationRule,
    Urgency,
)
from incidents.contacts.stored import StoredMethod, first_counts, method_item, rule_item
from incidents.models import User
from incidents.store import Store, new_id

LABEL = "Default"
"""PagerDuty's label for it."""


def first_contact_items(store: Store, account: str, user: User) -> list[Item]:
    """The Puts of a new user's email method, its rule and the user's counts (nothing for
    a profile without an email)."""
    if user.email is None:
        return []
    method = StoredMethod(
        id=new_id("cm"),
        type=ContactMethodType.EMAIL,
        summary=LABEL,
        label=LABEL,
        address=user.email,
        country_code=None,
        verified=True,
        enabled=True,
    )
    rule = NotificationRule(
        id=new_id("nr"),
        start_delay_in_minutes=0,
        contact_method=ContactMethodReference(id=method.id, type=method.type.reference),
        urgency=Urgency.HIGH,
    )
    return [
        store.put_operation(method_item(account, user.id, method), new=True),
        store.put_operation(rule_item(account, user.id, rule), new=True),
        *first_counts(store, account, user.id),
    ]
