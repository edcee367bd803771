"""Integrations: an account's keys for alert ingestion, each routed to a team.

A key (`incidents.access.secret_keys`) is shown once, on creation and rotation, and finds
its integration by one point read of ``integrationkey#<hash>``; an unknown key and a revoked
one take exactly the same path and get the same answer.
"""

from __future__ import annotations

from typing import Any

from dynashard.query import Item
from incidents.access.secret_keys import digest, lookup_item, lookup_key, new_key, owner_of
from incidents.alerts.models import (
    Integration,
    IntegrationChanges,
    IntegrationWithKey,
    NewIntegration,
)
from incidents.alerts.urgency import ALWAYS_HIGH, NEEDS_HOURS, UrgencyRuleError, lacks_hours
from incidents.errors import DomainError, NotFoundError, UnauthorizedError, VersionConflictError
from incidents.escalation.policies import reference_moves
from incidents.items import deserialize, serialize
from incidents.keys import integrations_partition, teams_partition
from incidents.models import INTEGRATION_PREFIX, timestamp
from incidents.store import Caller, Store, new_id
from incidents.table import PK, SK, item_key

KEY_PREFIX = "ik_"
KIND = "integrationkey"
NO_GROUPING = {"type": "none"}
STORED = (
    "name",
    "team_id",
    "escalation_policy_id",
    "default_severity",
    "auto_resolve_timeout",
    "acknowledgement_timeout",
    "alert_grouping",
    "incident_urgency_rule",
    "support_hours",
    "key_hint",
    "created_at",
    "last_used_at",
)


def create_integration(store: Store, caller: Caller, request: NewIntegration) -> IntegrationWithKey:
    """The integration, its key's lookup item and (if named) a check that its team exists,
    in one transaction."""
    key = new_key(KEY_PREFIX)
    shown = IntegrationWithKey(
        id=new_id(INTEGRATION_PREFIX),
        name=request.name,
        team_id=request.team_id,
        escalation_policy_id=request.escalation_policy_id,
        default_severity=request.default_severity,
        auto_resolve_timeout=request.auto_resolve_timeout,
        acknowledgement_timeout=request.acknowledgement_timeout,
        alert_grouping=request.alert_grouping,
        incident_urgency_rule=request.incident_urgency_rule,
        support_hours=request.support_hours,
        key_hint=key[-4:],
        created_at=timestamp(store.clock()),
        last_used_at=None,
        key=key,
    )
    operations = [
        store.put_operation(_integration_item(caller.account_id, shown, key), new=True),
        store.put_operation(lookup_item(KIND, key, caller.account_id, shown.id), new=True),
    ]
    failures: list[DomainError | None] = [None, None]
    if request.team_id is not None:
        operations.append(store.exists_check(teams_partition(caller.account_id), request.team_id))
        failures.append(NotFoundError(f"team {request.team_id} not found"))
    moves = reference_moves(store, caller.account_id, None, request.escalation_policy_id)
    store.transact(
        [*operations, *(m.request for m in moves)], [*failures, *(m.label for m in moves)]
    )
    return shown


def list_integrations(store: Store, caller: Caller) -> list[Integration]:
    """Every integration of the caller's account, oldest first."""
    items = store.query_partition(integrations_partition(caller.account_id))
    return [_integration(item) for item in items]


def get_integration(store: Store, caller: Caller, integration_id: str) -> Integration:
    """One integration of the caller's account, or 404."""
    return _integration(_stored(store, caller.account_id, integration_id))


def update_integration(
    store: Store, caller: Caller, integration_id: str, changes: IntegrationChanges
) -> Integration:
    """Change its name, team, escalation policy, default severity or timeouts (the team and
    the policy must exist): only the fields named, so a concurrent change of another field
    or a rotation of its key is kept, not overwritten with what this request read (nor
    answered with a 404). A change of policy moves both policies' counts of what names
    them, on the condition that the policy is still the one read."""
    fields = changes.model_dump(mode="json", exclude_unset=True)
    if {"incident_urgency_rule", "support_hours"} & set(fields):
        _check_urgency(get_integration(store, caller, integration_id), changes)
    names = {f"#f{n}": name for n, name in enumerate(fields)}
    values = serialize({f":f{n}": value for n, value in enumerate(fields.values())})
    sets = [f"#f{n} = :f{n}" for n in range(len(fields)) if f":f{n}" in values]
    removes = [f"#f{n}" for n in range(len(fields)) if f":f{n}" not in values]  # null: clear
    expression = " ".join(
        part
        for part in (sets and "SET " + ", ".join(sets), removes and "REMOVE " + ", ".join(removes))
        if part
    )
    update: dict[str, Any] = {
        "TableName": store.table_name,
        "Key": item_key(integrations_partition(caller.account_id), integration_id),
        "UpdateExpression": expression,
        "ConditionExpression": f"attribute_exists({PK})",
        "ExpressionAttributeNames": names,
    }
    moves = []
    if "escalation_policy_id" in fields:
        before = get_integration(store, caller, integration_id).escalation_policy_id
        update["ConditionExpression"] += (
            " AND escalation_policy_id = :before" if before
            else " AND attribute_not_exists(escalation_policy_id)"
        )  # fmt: skip
        values.update(serialize({":before": before}) if before else {})
        after = fields["escalation_policy_id"]
        moves = reference_moves(store, caller.account_id, before, after)
    if values:
        update["ExpressionAttributeValues"] = values
    operations: list[Item] = [{"Update": update}, *(m.request for m in moves)]
    failures: list[DomainError | None] = [
        (
            VersionConflictError(f"integration {integration_id} changed meanwhile; retry")
            if moves or "escalation_policy_id" in fields
            else NotFoundError(f"integration {integration_id} not found")
        ),
        *(m.label for m in moves),
    ]
    if fields.get("team_id") is not None:
        operations.append(store.exists_check(teams_partition(caller.account_id), fields["team_id"]))
        failures.append(NotFoundError(f"team {fields['team_id']} not found"))
    store.transact(operations, failures)
    return get_integration(store, caller, integration_id)


ROTATION_ATTEMPTS = 32
"""Tries of a rotation whose key another rotation replaced meanwhile: each lost try means
another rotation won, so concurrent rotations all end well below it."""


def rotate_key(store: Store, caller: Caller, integration_id: str) -> IntegrationWithKey:
    """A new key for the integration; the old one stops working at once. Only the key's
    fields change (on the condition that the key is still the one read), so a concurrent
    change of its name, team or severity is kept. Concurrent rotations each succeed, as if
    one after another: a rotation that finds the key replaced since its read reads it again,
    and the key that works is the last one answered."""
    key = new_key(KEY_PREFIX)
    for _ in range(ROTATION_ATTEMPTS):
        stored = _stored(store, caller.account_id, integration_id)  # 404 once it is deleted
        try:
            _replace_key(store, caller, integration_id, stored, key)
        except VersionConflictError:
            continue
        rotated = get_integration(store, caller, integration_id)
        return IntegrationWithKey(**rotated.model_dump(), key=key)
    raise VersionConflictError(f"integration {integration_id}'s key kept changing; retry")


def _replace_key(store: Store, caller: Caller, integration_id: str, stored: Item, key: str) -> None:
    """Put `key` in place of the stored one, if that is still the integration's key."""
    new_key_values = serialize({":hash": digest(key), ":hint": key[-4:]})
    moved = VersionConflictError(f"integration {integration_id}'s key was rotated meanwhile")
    store.transact(
        [
            {
                "Update": {
                    "TableName": store.table_name,
                    "Key": item_key(integrations_partition(caller.account_id), integration_id),
                    "UpdateExpression": "SET key_hash = :hash, key_hint = :hint",
                    "ConditionExpression": "key_hash = :seen",
                    "ExpressionAttributeValues": {**new_key_values, ":seen": stored["key_hash"]},
                }
            },
            store.put_operation(
                lookup_item(KIND, key, caller.account_id, integration_id), new=True
            ),
            {
                "Delete": {
                    "TableName": store.table_name,
                    "Key": lookup_key(KIND, stored["key_hash"]["S"]),
                }
            },
        ],
        [moved, None, None],
    )


def delete_integration(store: Store, caller: Caller, integration_id: str) -> None:
    """Delete it and its key (which stops working at once), and its count on the policy it
    names."""
    stored = deserialize(_stored(store, caller.account_id, integration_id))
    pk = integrations_partition(caller.account_id)
    policy = stored.get("escalation_policy_id")
    moves = reference_moves(store, caller.account_id, policy, None)
    store.transact(
        [
            {"Delete": {"TableName": store.table_name, "Key": item_key(pk, integration_id),
                        **_naming(policy)}},
            {
                "Delete": {
                    "TableName": store.table_name,
                    "Key": lookup_key(KIND, stored["key_hash"]),
                }
            },
            *(m.request for m in moves),
        ],
        [VersionConflictError(f"integration {integration_id} changed meanwhile; retry"), None,
         *(m.label for m in moves)],
    )  # fmt: skip


def _naming(policy: str | None) -> dict[str, Any]:
    """A condition that the integration still names `policy` (or none)."""
    if policy is None:
        return {"ConditionExpression": "attribute_not_exists(escalation_policy_id)"}
    return {
        "ConditionExpression": "escalation_policy_id = :policy",
        "ExpressionAttributeValues": {":policy": {"S": policy}},
    }


def authenticate(store: Store, key: str) -> tuple[Caller, Integration]:
    """The integration `key` belongs to, acting as itself in its account; the same
    `UnauthorizedError` for a key that never existed and one revoked or rotated away."""
    found = owner_of(store, KIND, key, integrations_partition)
    if found is None:
        raise UnauthorizedError("unknown or revoked integration key")
    account, stored = found
    integration = _integration(stored)
    return Caller(account_id=account, user_id=integration.id), integration


def _stored(store: Store, account: str, integration_id: str) -> Item:
    item = store.get(integrations_partition(account), integration_id)
    if item is None:
        raise NotFoundError(f"integration {integration_id} not found")
    return item


def _integration_item(account: str, integration: Integration, key: str) -> Item:
    values: dict[str, Any] = {
        PK: integrations_partition(account),
        SK: integration.id,
        "Type": "integration",
        "key_hash": digest(key),
        **integration.model_dump(mode="json", include=set(STORED)),
    }
    return serialize(values)


def _integration(item: Item) -> Integration:
    values = {  # what an integration stored before grouping and urgency rules had
        "alert_grouping": NO_GROUPING,
        "incident_urgency_rule": ALWAYS_HIGH.model_dump(),
        **deserialize(item),
    }
    return Integration.model_validate({"id": values[SK], **{n: values.get(n) for n in STORED}})


def _check_urgency(stored: Integration, changes: IntegrationChanges) -> None:
    """The urgency rule and support hours the change leaves, checked together (against the
    integration as read: a concurrent change of the other may pass it, and an integration
    without hours then opens its incidents at the rule's outside urgency)."""
    named = changes.model_fields_set
    rule = changes.incident_urgency_rule or stored.incident_urgency_rule
    hours = changes.support_hours if "support_hours" in named else stored.support_hours
    if lacks_hours(rule, hours):
        raise UrgencyRuleError(NEEDS_HOURS)
