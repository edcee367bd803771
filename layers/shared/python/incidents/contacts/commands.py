"""A user's contact methods and notification rules: create, read, replace, delete, and a
method's verification.

Who may: a person manages only their own (the path's user must be the caller); an owner or
admin may read anyone's; an API key with ``users:manage`` (its scope checked before) any
user's of its account. Identity is the authorizer's alone: the account is the caller's.

A method is made unverified with a code (`verification`), whose message waits for the
delivery channels (`messages`); a changed address needs a new code. A method's delete
takes its rules with it, as PagerDuty's does.
"""

from __future__ import annotations

from collections.abc import Sequence

from dynashard.query import Item
from incidents.contacts.messages import discard_message, message_item, verification_message
from incidents.contacts.models import (
    ContactMethod,
    ContactMethodBody,
    ContactMethodList,
    ContactMethodReference,
    ContactMethodType,
    MethodRequest,
    NotificationRule,
    NotificationRuleBody,
    NotificationRuleList,
    NotificationRuleRequest,
    UrlCheck,
    Verification,
    VerificationCode,
)
from incidents.contacts.stored import (
    METHOD_PREFIX,
    RULE_PREFIX,
    StoredMethod,
    as_read,
    count_move,
    limit_reached,
    method_item,
    read_method,
    read_methods,
    read_rule,
    read_rules,
    rule_item,
    touch_method,
)
from incidents.contacts.verification import (
    MAX_ATTEMPTS,
    AlreadyVerifiedError,
    PendingCode,
    count_code,
    issued,
    live,
    matches,
    new_code,
    wrong,
)
from incidents.errors import DomainError, ForbiddenError, NotFoundError
from incidents.keys import user_partition
from incidents.store import Caller, Failure, Store, new_id
from incidents.table import PK
from incidents.users import get_profile, require_self_or_manager, user_exists_check


class TypeMismatchError(DomainError):
    """A type that is not the method's: a replacement of another type, or a rule naming
    its method with another type."""

    code = "validation_error"


def list_contact_methods(store: Store, caller: Caller, user_id: str) -> ContactMethodList:
    """The user's methods, oldest first (404 for no such user)."""
    _may_read(store, caller, user_id)
    methods = read_methods(store, caller.account_id, user_id)
    if not methods:
        get_profile(store, caller, user_id)
    return ContactMethodList(contact_methods=[method.shown() for method in methods])


def get_contact_method(store: Store, caller: Caller, user_id: str, method_id: str) -> ContactMethod:
    """One of the user's methods."""
    _may_read(store, caller, user_id)
    return read_method(store, caller.account_id, user_id, method_id).shown()


def create_contact_method(
    store: Store, caller: Caller, user_id: str, body: ContactMethodBody, *, check_url: UrlCheck
) -> ContactMethod:
    """A new method, unverified, with its code's message waiting for delivery; the user's
    count of methods moved (409 at its limit) in the same transaction."""
    _may_manage(caller, user_id)
    account, request = caller.account_id, body.contact_method
    _check_address(request, check_url)
    blank = StoredMethod.model_validate({"id": new_id("cm"), "verified": False, **_fields(request)})
    method, _, message = _with_code(store, account, user_id, blank)
    exists, no_user = user_exists_check(store, account, user_id)
    _transact(
        store,
        [
            (store.put_operation(method_item(account, user_id, method), new=True), None),
            (exists, no_user),
            (count_move(store, account, user_id, METHOD_PREFIX, +1), limit_reached(METHOD_PREFIX)),
            (message, None),
        ],
    )
    return method.shown()


def replace_contact_method(
    store: Store,
    caller: Caller,
    user_id: str,
    method_id: str,
    body: ContactMethodBody,
    *,
    check_url: UrlCheck,
) -> ContactMethod:
    """The method's label, address and ``enabled`` replaced (its type stays); a new
    address is unverified again and sent a new code."""
    _may_manage(caller, user_id)
    account, request = caller.account_id, body.contact_method
    current = read_method(store, account, user_id, method_id)
    if request.type != current.type:
        raise TypeMismatchError(
            f"contact_method.type: {method_id} is a {current.type.value}; a method keeps its "
            "type (create another)"
        )
    _check_address(request, check_url)
    changed = current.model_copy(update={**_fields(request), "version": current.version + 1})
    operations = []
    if changed.address != current.address:
        changed, _, message = _with_code(store, account, user_id, changed)
        operations.append((message, None))
    put = store.put_operation(method_item(account, user_id, changed))
    _transact(store, [as_read(put, current), *operations])
    return changed.shown()


def delete_contact_method(store: Store, caller: Caller, user_id: str, method_id: str) -> None:
    """The method, the rules that use it and its pending message, in one transaction that
    frees their places in the user's counts (a rule made meanwhile: 409, retry)."""
    _may_manage(caller, user_id)
    account = caller.account_id
    current = read_method(store, account, user_id, method_id)
    rules = [r for r in read_rules(store, account, user_id) if r.contact_method.id == method_id]
    pk = user_partition(account, user_id)
    operations: list[tuple[Item, Failure]] = [
        as_read(store.delete_operation(pk, method_id), current),
        (count_move(store, account, user_id, METHOD_PREFIX, -1), None),
        (discard_message(store, account, user_id, method_id), None),
        *((store.delete_operation(pk, rule.id), None) for rule in rules),
    ]
    if rules:
        operations.append((count_move(store, account, user_id, RULE_PREFIX, -len(rules)), None))
    _transact(store, operations)


def send_verification(store: Store, caller: Caller, user_id: str, method_id: str) -> Verification:
    """A new code for an unverified method (the last one void), its message waiting for
    delivery; at most one a minute."""
    _may_manage(caller, user_id)
    account = caller.account_id
    current = read_method(store, account, user_id, method_id)
    if current.verified:
        raise AlreadyVerifiedError(f"contact method {method_id} is verified; it needs no code")
    moved = current.model_copy(update={"version": current.version + 1})
    changed, pending, message = _with_code(store, account, user_id, moved)
    put = store.put_operation(method_item(account, user_id, changed))
    _transact(store, [as_read(put, current), (message, None)])
    return Verification(
        contact_method_id=method_id,
        channel=changed.type.channel,
        expires_at=pending.expires_at,
        attempts_allowed=MAX_ATTEMPTS,
        delivery="pending",
    )


def verify_contact_method(
    store: Store, caller: Caller, user_id: str, method_id: str, body: VerificationCode
) -> ContactMethod:
    """The method verified by its pending code, which is then used up (with its message);
    a wrong code counts against the code's attempts (400), an expired or void one is 409."""
    _may_manage(caller, user_id)
    account = caller.account_id
    current = read_method(store, account, user_id, method_id)
    if current.verified:
        raise AlreadyVerifiedError(f"contact method {method_id} is verified; its code was used")
    pending = live(current.code, store.clock())
    moved = current.version + 1
    if not matches(method_id, pending, body.code):
        counted, refusal = wrong(pending)
        after = current.model_copy(update={"code": counted, "version": moved})
        _transact(
            store, [as_read(store.put_operation(method_item(account, user_id, after)), current)]
        )
        raise refusal
    verified = current.model_copy(update={"verified": True, "code": None, "version": moved})
    put = store.put_operation(method_item(account, user_id, verified))
    discard = discard_message(store, account, user_id, method_id)
    _transact(store, [as_read(put, current), (discard, None)])
    return verified.shown()


def list_notification_rules(store: Store, caller: Caller, user_id: str) -> NotificationRuleList:
    """The user's rules, oldest first (404 for no such user)."""
    _may_read(store, caller, user_id)
    rules = read_rules(store, caller.account_id, user_id)
    if not rules:
        get_profile(store, caller, user_id)
    return NotificationRuleList(notification_rules=rules)


def get_notification_rule(
    store: Store, caller: Caller, user_id: str, rule_id: str
) -> NotificationRule:
    """One of the user's rules."""
    _may_read(store, caller, user_id)
    return read_rule(store, caller.account_id, user_id, rule_id)


def create_notification_rule(
    store: Store, caller: Caller, user_id: str, body: NotificationRuleBody
) -> NotificationRule:
    """A new rule for one of the user's own methods, the user's count of rules moved (409
    at its limit) in the same transaction."""
    _may_manage(caller, user_id)
    account = caller.account_id
    rule = _rule(store, account, user_id, new_id("nr"), body.notification_rule)
    _transact(
        store,
        [
            (store.put_operation(rule_item(account, user_id, rule), new=True), None),
            touch_method(store, account, user_id, rule.contact_method.id),
            (count_move(store, account, user_id, RULE_PREFIX, +1), limit_reached(RULE_PREFIX)),
        ],
    )
    return rule


def replace_notification_rule(
    store: Store, caller: Caller, user_id: str, rule_id: str, body: NotificationRuleBody
) -> NotificationRule:
    """The rule's delay, method and urgency replaced."""
    _may_manage(caller, user_id)
    account = caller.account_id
    read_rule(store, account, user_id, rule_id)
    rule = _rule(store, account, user_id, rule_id, body.notification_rule)
    put = store.put_operation(rule_item(account, user_id, rule))
    put["Put"]["ConditionExpression"] = f"attribute_exists({PK})"
    gone = NotFoundError(f"notification rule {rule_id} not found for user {user_id}")
    _transact(store, [(put, gone), touch_method(store, account, user_id, rule.contact_method.id)])
    return rule


def delete_notification_rule(store: Store, caller: Caller, user_id: str, rule_id: str) -> None:
    """The rule, its place in the user's count freed."""
    _may_manage(caller, user_id)
    account = caller.account_id
    delete = store.delete_operation(user_partition(account, user_id), rule_id)
    gone = NotFoundError(f"notification rule {rule_id} not found for user {user_id}")
    _transact(store, [(delete, gone), (count_move(store, account, user_id, RULE_PREFIX, -1), None)])


def _may_read(store: Store, caller: Caller, user_id: str) -> None:
    """A person reads their own; an owner or admin anyone's; a key (its scope) any."""
    require_self_or_manager(store, caller, user_id)


def _may_manage(caller: Caller, user_id: str) -> None:
    """A person changes only their own; a key (its scope) any user's of its account."""
    if caller.takes_part and caller.user_id != user_id:
        raise ForbiddenError(
            "a person manages only their own contact methods and notification rules (an "
            "owner or admin may read them)"
        )


def _fields(request: MethodRequest) -> dict[str, object]:
    """What a method takes from its request (an address already normalized)."""
    return {
        "type": ContactMethodType(request.type),
        "label": request.label,
        "summary": request.label,
        "address": request.address,
        "country_code": getattr(request, "country_code", None),
        "enabled": request.enabled,
    }


def _check_address(request: MethodRequest, check_url: UrlCheck) -> None:
    """A Slack webhook's URL must pass the SSRF check a webhook's does."""
    if ContactMethodType(request.type) is ContactMethodType.SLACK:
        check_url(request.address)


def _with_code(
    store: Store, account: str, user_id: str, method: StoredMethod
) -> tuple[StoredMethod, PendingCode, Item]:
    """`method` unverified with a new code (not within a minute of its last, nor past the
    address's codes of the day), the code as kept, and the Put of its message."""
    code = new_code()
    pending = issued(method.id, code, store.clock(), method.code)
    count_code(store.table, account, method.address, store.clock())
    coded = method.model_copy(update={"code": pending, "verified": False})
    message = verification_message(account, user_id, coded, code, pending.expires_at)
    return coded, pending, store.put_operation(message_item(message))


def _rule(
    store: Store, account: str, user_id: str, rule_id: str, request: NotificationRuleRequest
) -> NotificationRule:
    """The rule `request` describes, its method read: one of the user's own (404 else), of
    the type the request names."""
    reference = request.contact_method
    method = read_method(store, account, user_id, reference.id)
    if method.type is not reference.method_type:
        raise TypeMismatchError(
            f"notification_rule.contact_method.type: {reference.id} is a "
            f"{method.type.value}, not a {reference.method_type.value}"
        )
    return NotificationRule(
        id=rule_id,
        start_delay_in_minutes=request.start_delay_in_minutes,
        contact_method=ContactMethodReference(id=method.id, type=method.type.reference),
        urgency=request.urgency,
    )


def _transact(store: Store, operations: Sequence[tuple[Item, Failure]]) -> None:
    """One transaction of (operation, the error its failed condition raises)."""
    store.transact([operation for operation, _ in operations], [f for _, f in operations])
