"""Contact methods and notification rules as items: seed 002's layout, in the user's own
partition ``<acct>#<user>`` beside their profile, a method at ``cm_<id>`` and a rule at
``nr_<id>``, so one Query by prefix reads each list and nothing of another user's.

A method's item carries a ``version`` every write moves and conditions on: a rule made
for it moves it too, so a method's delete (with its rules, read first) cannot miss a rule
made meanwhile. Each user's counts of both sit in two items beside them, moved in each
create's and delete's transaction (`incidents.account_limits.count_update`).
"""

from __future__ import annotations

from pydantic import ConfigDict

from dynashard import build_key
from dynashard.query import Item
from incidents.account_limits import LimitReachedError, count_update
from incidents.contacts.models import (
    MAX_CONTACT_METHODS,
    MAX_NOTIFICATION_RULES,
    ContactMethod,
    NotificationRule,
)
from incidents.contacts.verification import PendingCode
from incidents.errors import NotFoundError, VersionConflictError
from incidents.items import from_item, from_item_fields, to_item
from incidents.keys import user_partition
from incidents.store import Failure, Store
from incidents.table import PK, SK, item_key

METHOD_PREFIX = "cm_"
RULE_PREFIX = "nr_"
COUNTED = {
    METHOD_PREFIX: ("contact_methods", MAX_CONTACT_METHODS),
    RULE_PREFIX: ("notification_rules", MAX_NOTIFICATION_RULES),
}
"""Each kind's name in its count's key and messages, and its limit per user."""


class StoredMethod(ContactMethod):
    """A method's item: what the API shows, its version and its pending code."""

    model_config = ConfigDict(frozen=True)

    version: int = 1
    code: PendingCode | None = None

    def shown(self) -> ContactMethod:
        """The method as the API shows it (no version, no code)."""
        return ContactMethod.model_validate(
            self.model_dump(include=set(ContactMethod.model_fields))
        )


def method_item(account: str, user_id: str, method: StoredMethod) -> Item:
    """A method, at its id in its user's partition."""
    return to_item(method, "contact_method", {PK: user_partition(account, user_id), SK: method.id})


def rule_item(account: str, user_id: str, rule: NotificationRule) -> Item:
    """A rule, at its id in its user's partition."""
    return to_item(rule, "notification_rule", {PK: user_partition(account, user_id), SK: rule.id})


def read_method(store: Store, account: str, user_id: str, method_id: str) -> StoredMethod:
    """One of the user's methods, or 404."""
    item = store.get(user_partition(account, user_id), method_id)
    if item is None:
        raise NotFoundError(f"contact method {method_id} not found for user {user_id}")
    return from_item_fields(StoredMethod, item)


def read_rule(store: Store, account: str, user_id: str, rule_id: str) -> NotificationRule:
    """One of the user's rules, or 404."""
    item = store.get(user_partition(account, user_id), rule_id)
    if item is None:
        raise NotFoundError(f"notification rule {rule_id} not found for user {user_id}")
    return from_item(NotificationRule, item)


def read_methods(store: Store, account: str, user_id: str) -> list[StoredMethod]:
    """The user's methods, oldest first (ids are time-ordered)."""
    items = store.query_partition(user_partition(account, user_id), prefix=METHOD_PREFIX)
    return [from_item_fields(StoredMethod, item) for item in items]


def read_rules(store: Store, account: str, user_id: str) -> list[NotificationRule]:
    """The user's rules, oldest first."""
    items = store.query_partition(user_partition(account, user_id), prefix=RULE_PREFIX)
    return [from_item(NotificationRule, item) for item in items]


def count_move(store: Store, account: str, user_id: str, prefix: str, change: int) -> Item:
    """The Update of the user's count of methods or rules (`prefix`) by `change`."""
    name, limit = COUNTED[prefix]
    key = item_key(user_partition(account, user_id), build_key("count", name, kind="sort"))
    return count_update(store.table_name, key, "count", change, limit)


def limit_reached(prefix: str) -> LimitReachedError:
    """The 409 of a user's 21st method or rule."""
    name, limit = COUNTED[prefix]
    noun = name.replace("_", " ")
    return LimitReachedError(f"a user holds at most {limit} {noun}; delete one first")


def first_counts(store: Store, account: str, user_id: str) -> list[Item]:
    """The Puts of a new user's counts: one method and one rule (the first email's)."""
    pk = user_partition(account, user_id)
    return [
        store.put_operation(
            {
                PK: {"S": pk},
                SK: {"S": build_key("count", name, kind="sort")},
                "Type": {"S": "count"},
                "count": {"N": "1"},
            }
        )
        for name, _ in COUNTED.values()
    ]


def as_read(operation: Item, read: StoredMethod) -> tuple[Item, Failure]:
    """`operation` (a Put or Delete of the method) only over the version `read` was: a
    concurrent change, or a rule made for it meanwhile, is a 409."""
    request = next(iter(operation.values()))
    request["ConditionExpression"] = "#v = :seen"
    request["ExpressionAttributeNames"] = {"#v": "version"}
    request["ExpressionAttributeValues"] = {":seen": {"N": str(read.version)}}
    return operation, VersionConflictError("the contact method changed meanwhile; retry")


def touch_method(store: Store, account: str, user_id: str, method_id: str) -> tuple[Item, Failure]:
    """The Update that moves a method's version as a rule is made for it (a 404 if it went
    meanwhile), so a delete that read its rules before fails rather than leave one."""
    update = {
        "Update": {
            "TableName": store.table_name,
            "Key": item_key(user_partition(account, user_id), method_id),
            "UpdateExpression": "SET #v = #v + :one",
            "ConditionExpression": f"attribute_exists({PK})",
            "ExpressionAttributeNames": {"#v": "version"},
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
    }
    return update, NotFoundError(f"contact method {method_id} not found for user {user_id}")
