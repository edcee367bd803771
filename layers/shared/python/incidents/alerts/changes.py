"""Change events in (PagerDuty's Change Events API): what changed in a system (a deploy, a
configuration push, a feature flag) is kept in the account's change log, a partition a
day, and never opens or moves an incident (decision 013). Responders read the changes
around an incident's start with ``GET /changes?since&until``; the log keeps
`RETENTION_DAYS`, as PagerDuty does. A change sent again (a retry, or the same body sent
at once by a tool that retries on a timeout) is kept once, as an alert is counted once
(`incidents.alerts.seen`).
"""

from __future__ import annotations

import json
from datetime import UTC, timedelta
from typing import Any

from dynashard import build_key
from dynashard.query import Item
from incidents.alerts.models import Change, ChangeEvent, ChangeRecorded, Integration
from incidents.alerts.seen import SeenError, body_digest, seen_answer, seen_put, tries
from incidents.alerts.trimmed import size_of, trimmed
from incidents.errors import InvalidFilterError, ThrottledError, VersionConflictError
from incidents.items import (
    MAX_DETAILS_BYTES,
    MAX_ITEM_BYTES,
    deserialize,
    details_body,
    serialize,
)
from incidents.models import timestamp
from incidents.paging import ListPage, PageRequest, fanout_page, partition_stream
from incidents.store import Caller, Store, new_id
from incidents.table import PK, SK

RETENTION_DAYS = 90
DEFAULT_DAYS = 7
"""A read without ``since`` covers this many days up to ``until`` (or now)."""
MAX_DAYS = 31
"""Days one read may cover: one Query a day, merged in order."""
FIELDS = ("id", "at", "integration_id", "team_id", "summary", "source")
ITEM_RESERVE = 8 * 1024
"""Bytes of a change's item kept for its attribute names and types: its custom details
take what is left of DynamoDB's 400 KB beside its summary, links and images."""
CHANGE_SECONDS = 6.0
"""How long a change racing its own copies tries again (each loser then reads the winner's
answer); past it, a 429, which every sender retries."""


def changes_partition(account: str, day: str) -> str:
    """``<acct>#changes#<yyyy-mm-dd>``: the account's changes of one UTC day."""
    return build_key(account, "changes", day)


def record_change(
    store: Store, caller: Caller, integration: Integration, event: ChangeEvent
) -> ChangeRecorded:
    """Keep `event` in the account's change log (at the time it names, or now if it names
    none or one ahead of the server's clock), with its seen item in the same transaction:
    the same body again within the seen window answers the first one's id and keeps
    nothing more."""
    account = caller.account_id
    digest = body_digest(integration.id, "change", event)
    for _ in tries(CHANGE_SECONDS):
        recorded, put = _change_put(store, caller, integration, event)
        seen = seen_put(store, account, digest, recorded)
        try:
            store.transact([seen, put], [SeenError("this change was kept"), None])
        except SeenError:
            first = seen_answer(store, account, digest, ChangeRecorded)
            if first is not None:
                return first
        except VersionConflictError:
            continue  # a copy's transaction was writing the seen item: read it again
        else:
            return recorded
    raise ThrottledError("the change is busy; retry with back-off")


def _change_put(
    store: Store, caller: Caller, integration: Integration, event: ChangeEvent
) -> tuple[ChangeRecorded, Item]:
    """The change's answer and the Put of its item in the account's log."""
    payload, now = event.payload, store.clock()
    at = min(payload.timestamp, now) if payload.timestamp else now
    stamped = timestamp(at)
    change_id = new_id("chg")
    details = payload.custom_details
    values: dict[str, Any] = {
        PK: changes_partition(caller.account_id, stamped[:10]),
        SK: f"{stamped}#{change_id}",
        "Type": "change",
        "ExpiresAt": int((at + timedelta(days=RETENTION_DAYS)).timestamp()),
        "id": change_id,
        "at": stamped,
        "integration_id": integration.id,
        "team_id": integration.team_id,
        "summary": payload.summary,
        "source": payload.source,
        **event.model_dump(mode="json", include={"links", "images"}, exclude_none=True),
    }
    if details is not None:  # what the item has room for beside the rest
        room = min(MAX_DETAILS_BYTES, MAX_ITEM_BYTES - ITEM_RESERVE - size_of(values))
        values["custom_details"] = details_body(trimmed(details, room))
    put = {"Put": {"TableName": store.table_name, "Item": serialize(values)}}
    return ChangeRecorded(status="recorded", id=change_id), put


def list_changes(store: Store, caller: Caller, page: PageRequest) -> ListPage[Change]:
    """The account's changes in the page's window (``since`` defaults to `DEFAULT_DAYS`
    before ``until``, which defaults to now; at most `MAX_DAYS`), newest first by default:
    one Query a day, merged in order by the fan-out engine."""
    until = page.window.until or store.clock()
    since = page.window.since or until - timedelta(days=DEFAULT_DAYS)
    first, last = since.astimezone(UTC).date(), until.astimezone(UTC).date()
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    if len(days) > MAX_DAYS:
        raise InvalidFilterError(f"a window of at most {MAX_DAYS} days: ask for less")
    in_window = page.window.sort_range("")
    streams = [
        partition_stream(store, changes_partition(caller.account_id, str(day)), in_window)
        for day in days
    ]
    binding = "\x1f".join(["changes", caller.account_id, *page.window.binding()])
    return fanout_page(
        store,
        streams,
        binding,
        page,
        identity=lambda item: item["id"]["S"],
        convert=_change,
    )


def _change(item: Item) -> Change:
    values = deserialize(item)
    details = values.get("custom_details")
    return Change.model_validate(
        {
            **{name: values.get(name) for name in FIELDS},
            "custom_details": None if details is None else json.loads(details),
            "links": values.get("links", []),
            "images": values.get("images", []),
        }
    )
