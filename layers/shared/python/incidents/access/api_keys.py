"""API keys: an account's credentials for machines calling the API (CI, scripts), each
with scopes. A key is ``mk_`` and 32 random bytes (`incidents.access.secret_keys`), shown
once; the authorizer finds it by one point read and passes on its account, its id (the
actor its changes are recorded under) and its scopes. Revoking deletes it: the next
authorizer call finds nothing (API Gateway may serve its cached answer until it lapses)."""

from __future__ import annotations

from dynashard import build_key
from dynashard.query import Item
from incidents.access.models import ApiKey, ApiKeyWithKey, NewApiKey
from incidents.access.secret_keys import digest, lookup_item, lookup_key, new_key, owner_of
from incidents.errors import NotFoundError, UnauthorizedError
from incidents.items import deserialize, serialize
from incidents.models import timestamp
from incidents.store import Caller, Store, new_id
from incidents.table import PK, SK, item_key

KEY_PREFIX = "mk_"
KIND = "apikey"
STORED = ("name", "scopes", "key_hint", "created_at", "last_used_at")


def api_keys_partition(account: str) -> str:
    """``<acct>#apikey``: the account's API keys."""
    return build_key(account, KIND)


def create_api_key(store: Store, caller: Caller, request: NewApiKey) -> ApiKeyWithKey:
    """The key's item and its lookup item, in one transaction."""
    key = new_key(KEY_PREFIX)
    shown = ApiKeyWithKey(
        id=new_id("key"),
        name=request.name,
        scopes=sorted(set(request.scopes)),
        key_hint=key[-4:],
        created_at=timestamp(store.clock()),
        last_used_at=None,
        key=key,
    )
    values = shown.model_dump(include=set(STORED))
    item = {PK: api_keys_partition(caller.account_id), SK: shown.id, "Type": KIND, **values}
    store.transact(
        [
            store.put_operation(serialize({**item, "key_hash": digest(key)}), new=True),
            store.put_operation(lookup_item(KIND, key, caller.account_id, shown.id), new=True),
        ],
        [None, None],
    )
    return shown


def list_api_keys(store: Store, caller: Caller) -> list[ApiKey]:
    """Every API key of the caller's account, oldest first."""
    return [_api_key(item) for item in store.query_partition(api_keys_partition(caller.account_id))]


def get_api_key(store: Store, caller: Caller, key_id: str) -> ApiKey:
    """One API key of the caller's account, or 404."""
    return _api_key(_stored(store, caller.account_id, key_id))


def revoke_api_key(store: Store, caller: Caller, key_id: str) -> None:
    """Delete the key and its lookup item."""
    stored = deserialize(_stored(store, caller.account_id, key_id))
    store.transact(
        [
            {"Delete": {"TableName": store.table_name, "Key": _key(caller.account_id, key_id)}},
            {
                "Delete": {
                    "TableName": store.table_name,
                    "Key": lookup_key(KIND, stored["key_hash"]),
                }
            },
        ],
        [None, None],
    )


def authenticate(store: Store, key: str) -> tuple[Caller, ApiKey]:
    """The account and the key `key` is, acting as itself; the same `UnauthorizedError`
    for a key that never existed and one revoked."""
    found = owner_of(store, KIND, key, api_keys_partition)
    if found is None:
        raise UnauthorizedError("unknown or revoked API key")
    account, stored = found
    api_key = _api_key(stored)
    return Caller(account_id=account, user_id=api_key.id), api_key


def _stored(store: Store, account: str, key_id: str) -> Item:
    item = store.get(api_keys_partition(account), key_id)
    if item is None:
        raise NotFoundError(f"API key {key_id} not found")
    return item


def _api_key(item: Item) -> ApiKey:
    values = deserialize(item)
    return ApiKey.model_validate({"id": values[SK], **{n: values.get(n) for n in STORED}})


def _key(account: str, key_id: str) -> Item:
    return item_key(api_keys_partition(account), key_id)
