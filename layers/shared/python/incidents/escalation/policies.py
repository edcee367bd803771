"""Escalation policies: create, read, list, replace and delete, one item each in the
account's teams partition.

A policy's item counts what names it (``refs``: integrations), moved in the transaction
of each integration that starts or stops naming it, so a policy in use is never deleted
from under an integration (PagerDuty refuses the delete too). A replace moves its version:
incidents already escalating keep the copy they started with (`incidents.escalation`'s
snapshot), new ones take the new version.
"""

from __future__ import annotations

from dynashard.query import Item
from dynashard.resharding import Operation, Transaction
from incidents.account_limits import Limited, count_move, counted
from incidents.errors import ConflictError, DomainError, NotFoundError, VersionConflictError
from incidents.escalation.models import (
    EscalationPolicy,
    EscalationPolicyList,
    EscalationPolicyRequest,
    EscalationRule,
    TargetType,
)
from incidents.items import deserialize, serialize
from incidents.keys import (
    PROFILE_SK,
    escalation_policies_prefix,
    escalation_policy_sort_key,
    schedule_sort_key,
    teams_partition,
    user_partition,
)
from incidents.models import timestamp
from incidents.paging import DEFAULT_LIMIT, prefix_page
from incidents.store import Caller, Failure, Store, labelled, new_id
from incidents.table import PK, SK, item_key

REFERENCES = "refs"
"""The count of integrations naming a policy."""


class PolicyInUseError(ConflictError):
    """Integrations name the policy: they must name another (or none) first."""


def create_policy(
    store: Store, caller: Caller, request: EscalationPolicyRequest
) -> EscalationPolicy:
    """The policy, version 1, with the checks that what it names is the account's and the
    account's count of policies (409 at its limit)."""
    now = timestamp(store.clock())
    policy = _built(request, new_id("ep"), version=1, created_at=now, updated_at=now)
    account = caller.account_id
    put = store.put_operation(policy_item(account, policy), new=True)
    checks = _checks(store, account, request)
    moved = count_move(store, account, Limited.ESCALATION_POLICIES, +1)
    counted(
        lambda: store.transact_growing(lambda: Transaction([labelled(put), *checks, moved], None))
    )
    return policy


def get_policy(store: Store, caller: Caller, policy_id: str) -> EscalationPolicy:
    """The policy, or 404."""
    return policy_from(_read(store, caller.account_id, policy_id))


def list_policies(
    store: Store, caller: Caller, *, limit: int = DEFAULT_LIMIT, cursor: str | None = None
) -> EscalationPolicyList:
    """A page of the account's policies, by id."""
    account = caller.account_id
    partition = (teams_partition(account), escalation_policies_prefix())
    page = prefix_page(
        store, partition, f"{account}#escalation_policies", policy_from, limit=limit, cursor=cursor
    )
    return EscalationPolicyList(
        items=page.items, next_cursor=page.next_cursor, has_more=page.has_more
    )


def replace_policy(
    store: Store, caller: Caller, policy_id: str, request: EscalationPolicyRequest
) -> EscalationPolicy:
    """The policy as `request` has it, its version moved (only from the version read: a
    replace racing another answers 409 ``version_conflict``)."""
    account = caller.account_id
    item = _read(store, account, policy_id)
    before = policy_from(item)
    policy = _built(
        request, policy_id, version=before.version + 1, created_at=before.created_at,
        updated_at=timestamp(store.clock()),
    )  # fmt: skip
    fields = policy.model_dump(mode="json", exclude={"type", "id"})
    values = serialize({f":{name}": value for name, value in fields.items()})
    names = [name[1:] for name in values]
    put = {
        "Update": {  # its fields only: the count of what names it moves on its own
            "TableName": store.table_name,
            "Key": item_key(teams_partition(account), escalation_policy_sort_key(policy_id)),
            "UpdateExpression": "SET " + ", ".join(f"#{n} = :{n}" for n in names),
            "ConditionExpression": "#version = :read",
            "ExpressionAttributeNames": {f"#{n}": n for n in names},
            "ExpressionAttributeValues": {**values, ":read": {"N": str(before.version)}},
        }
    }
    checks = _checks(store, account, request)
    moved = VersionConflictError(f"escalation policy {policy_id} changed meanwhile; retry")
    store.transact_growing(lambda: Transaction([labelled(put, moved), *checks], None))
    return policy


def delete_policy(store: Store, caller: Caller, policy_id: str) -> None:
    """The policy, unless something names it (409), freeing its place in the account's
    count."""
    account = caller.account_id
    item = _read(store, account, policy_id)
    in_use = PolicyInUseError(
        f"escalation policy {policy_id} is named by integrations: point them elsewhere first"
    )
    if int(item.get(REFERENCES, {}).get("N", "0")):
        raise in_use
    delete = {
        "Delete": {
            "TableName": store.table_name,
            "Key": item_key(teams_partition(account), escalation_policy_sort_key(policy_id)),
            "ConditionExpression": f"attribute_exists({PK}) AND "
            f"(attribute_not_exists({REFERENCES}) OR {REFERENCES} = :none)",
            "ExpressionAttributeValues": {":none": {"N": "0"}},
        }
    }
    moved = count_move(store, account, Limited.ESCALATION_POLICIES, -1)
    counted(
        lambda: store.transact_growing(lambda: Transaction([labelled(delete, in_use), moved], None))
    )


def reference_moves(
    store: Store, account: str, before: str | None, after: str | None
) -> list[Operation[Failure]]:
    """An integration's transaction's Updates when it stops naming `before` and starts
    naming `after` (404 if `after` is not the account's; a `before` deleted meanwhile has no
    count left to move)."""
    if before == after:
        return []
    moves = []
    if after is not None:
        moves.append(labelled(
            _reference_update(store, account, after, +1),
            NotFoundError(f"escalation policy {after} not found in this account"),
        ))  # fmt: skip
    if before is not None and find_policy(store, account, before) is not None:
        moves.append(labelled(_reference_update(store, account, before, -1)))
    return moves


def policy_item(account: str, policy: EscalationPolicy) -> Item:
    """The policy's item as a create writes it (a replace sets its fields, never its count
    of what names it)."""
    values = policy.model_dump(mode="json", exclude={"type"})
    keys = {PK: teams_partition(account), SK: escalation_policy_sort_key(policy.id)}
    return serialize({**values, "Type": "escalation_policy", **keys})


def policy_from(item: Item) -> EscalationPolicy:
    """The policy an item holds."""
    values = deserialize(item)
    return EscalationPolicy.model_validate(
        {name: values.get(name) for name in EscalationPolicy.model_fields if name != "type"}
    )


def find_policy(store: Store, account: str, policy_id: str) -> EscalationPolicy | None:
    """The policy, or None (a strongly consistent point read)."""
    item = store.get(teams_partition(account), escalation_policy_sort_key(policy_id))
    return None if item is None else policy_from(item)


def _read(store: Store, account: str, policy_id: str) -> Item:
    item = store.get(teams_partition(account), escalation_policy_sort_key(policy_id))
    if item is None:
        raise NotFoundError(f"escalation policy {policy_id} not found")
    return item


def _built(
    request: EscalationPolicyRequest, policy_id: str, *, version: int, created_at: str,
    updated_at: str,
) -> EscalationPolicy:  # fmt: skip
    rules = [
        EscalationRule(id=f"{policy_id}#{n}", **rule.model_dump())
        for n, rule in enumerate(request.escalation_rules, start=1)
    ]
    return EscalationPolicy(
        id=policy_id, name=request.name, description=request.description,
        num_loops=request.num_loops, escalation_rules=rules, team_ids=list(request.team_ids),
        version=version, created_at=created_at, updated_at=updated_at,
    )  # fmt: skip


def _checks(
    store: Store, account: str, request: EscalationPolicyRequest
) -> list[Operation[Failure]]:
    """ConditionChecks that each team, user and schedule the policy names is the
    account's, each failing with a 404 that names it."""
    named: dict[tuple[str, str], DomainError] = {}
    for team in request.team_ids:
        named[(teams_partition(account), team)] = NotFoundError(f"team {team} not found")
    for rule in request.escalation_rules:
        for target in rule.targets:
            key = (
                (user_partition(account, target.id), PROFILE_SK)
                if target.type is TargetType.USER
                else (teams_partition(account), schedule_sort_key(target.id))
            )
            named[key] = NotFoundError(f"{target.type.value} {target.id} not found")
    return [labelled(store.exists_check(*key), error) for key, error in named.items()]


def _reference_update(store: Store, account: str, policy_id: str, change: int) -> Item:
    return {
        "Update": {
            "TableName": store.table_name,
            "Key": item_key(teams_partition(account), escalation_policy_sort_key(policy_id)),
            "UpdateExpression": f"ADD {REFERENCES} :change",
            "ConditionExpression": f"attribute_exists({PK})",
            "ExpressionAttributeValues": {":change": {"N": str(change)}},
        }
    }
