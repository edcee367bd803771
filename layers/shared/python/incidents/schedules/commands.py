"""Schedules and their overrides: create, read (rendered over a range), list, edit from a
time on, delete; overrides created, listed by range and deleted.

A schedule is its item, one item per layer version and two per override (one keyed by its
end, which ranges read; one by its id, which a delete finds it by), all in the account's
teams partition. Every write moves the schedule's version under a condition on the version
it read, so two edits never interleave and whatever was computed from a schedule (its
handoffs) can tell it is stale. An edit never rewrites the past: it takes effect at a time
on (now by default), a layer's rotation gets a version from then and its versions that
would have taken effect later are dropped; an override that has ended is read-only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from dynashard.query import Item
from dynashard.resharding import Transaction
from incidents.account_limits import Limited, count_move, counted
from incidents.errors import ConflictError, DomainError, NotFoundError
from incidents.items import deserialize
from incidents.keys import (
    PROFILE_SK,
    feed_sort_key,
    schedule_override_id_sort_key,
    schedule_override_ids_prefix,
    schedule_override_sort_key,
    schedule_overrides_prefix,
    schedule_sort_key,
    schedule_version_sort_key,
    schedule_versions_prefix,
    schedules_prefix,
    teams_partition,
    user_partition,
)
from incidents.models import timestamp
from incidents.paging import DEFAULT_LIMIT, prefix_page
from incidents.schedules.engine import version_at
from incidents.schedules.handoffs import cleared, transact_with_now
from incidents.schedules.model import Layer, LayerVersion, Override
from incidents.schedules.models import (
    OverrideList,
    OverrideRequest,
    Schedule,
    ScheduleChange,
    ScheduleList,
    ScheduleOverride,
    ScheduleRequest,
    ScheduleSummary,
    UserReference,
)
from incidents.schedules.on_call_now import OverridesIn, known_at, members_item
from incidents.schedules.reads import (
    future_override_count,
    overrides_between,
    overrides_reader,
    read_schedule,
)
from incidents.schedules.rendering import asked_range, longest_range, render_range
from incidents.schedules.stored import (
    LayerSpan,
    StoredSchedule,
    override_from,
    override_item,
    schedule_item,
    version_item,
)
from incidents.store import Caller, Failure, Store, labelled, new_id
from incidents.table import TABLE_SCHEMA, item_key

MAX_FUTURE_OVERRIDES = 10_000
MAX_PENDING_VERSIONS = 5
"""Versions of a layer not yet in effect (edits queued for later times): an edit replaces
those after its own time in one transaction, which holds at most 100 items."""


class ScheduleTimesError(DomainError):
    """Times only the clock refuses: an edit that would take effect in the past, an
    override that has already ended."""

    code = "validation_error"


class PastOverrideError(ConflictError):
    """An override that has ended is part of who was on call: it cannot be deleted."""


class TooManyOverridesError(ConflictError):
    """A schedule holds `MAX_FUTURE_OVERRIDES` overrides not yet ended."""


class TooManyPendingVersionsError(ConflictError):
    """A layer would hold more than `MAX_PENDING_VERSIONS` versions not yet in effect."""


def create_schedule(store: Store, caller: Caller, request: ScheduleRequest) -> Schedule:
    """The schedule, each layer with one version from its start, in one transaction with the
    checks that its teams are the account's and the account's count of schedules (409 at
    its limit); its users must be the account's too."""
    account, clock = caller.account_id, store.clock()
    now = timestamp(clock)
    _require_users(store, account, request)
    schedule = StoredSchedule(
        id=new_id("sched"),
        name=request.name,
        description=request.description,
        time_zone=request.time_zone,
        team_ids=tuple(request.team_ids),
        version=1,
        created_at=now,
        updated_at=now,
        spans=tuple(_span(layer.name, layer.start, layer.end) for layer in request.schedule_layers),
        versions=tuple(
            (layer.version(request.time_zone, layer.start),) for layer in request.schedule_layers
        ),
    )
    operations = [store.put_operation(schedule_item(account, schedule), new=True)]
    operations += _version_puts(store, account, schedule.id, schedule.versions)
    checks, failures = _team_checks(store, account, request.team_ids)
    moved = count_move(store, account, Limited.SCHEDULES, +1)
    no_overrides: OverridesIn = lambda since, until: []  # noqa: E731
    counted(lambda: _commit(store, account, (schedule, no_overrides, clock),
                            [*operations, *checks, moved.request],
                            [None] * len(operations) + failures + [moved.label]))  # fmt: skip
    return get_schedule(store, caller, schedule.id)


def get_schedule(
    store: Store,
    caller: Caller,
    schedule_id: str,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Schedule:
    """The schedule rendered over [since, until) (now and a week on by default, or as long
    as a render may be at its turns)."""
    stored = read_schedule(store, caller.account_id, schedule_id)
    layers = stored.layers()
    since, until = asked_range(since, until, store.clock(), longest_range(layers))
    overrides = overrides_between(store, caller.account_id, schedule_id, since, until)
    request = _as_request(stored, store.clock())
    shown = render_range(request.schedule_layers, layers, overrides, since, until)
    return Schedule(
        id=stored.id,
        name=stored.name,
        description=stored.description,
        time_zone=stored.time_zone,
        team_ids=list(stored.team_ids),
        since=timestamp(since),
        until=timestamp(until),
        schedule_layers=shown.layers,
        final_schedule=shown.final,
        overrides_subschedule=shown.overrides,
        version=stored.version,
        created_at=stored.created_at,
        updated_at=stored.updated_at,
    )


def list_schedules(
    store: Store, caller: Caller, *, limit: int = DEFAULT_LIMIT, cursor: str | None = None
) -> ScheduleList:
    """A page of the account's schedules, by id."""
    account = caller.account_id
    partition = (teams_partition(account), schedules_prefix())
    page = prefix_page(
        store, partition, f"{account}#schedules", _summary, limit=limit, cursor=cursor
    )
    return ScheduleList(items=page.items, next_cursor=page.next_cursor, has_more=page.has_more)


def update_schedule(
    store: Store, caller: Caller, schedule_id: str, change: ScheduleChange
) -> Schedule:
    """The schedule as `change` has it from its `effective_at` on, who was on call before
    left as it was."""
    account, now = caller.account_id, store.clock()
    at = change.effective_at or now
    if at < now:
        raise ScheduleTimesError("effective_at: must not be in the past (the past is read-only)")
    _require_users(store, account, change)
    stored = read_schedule(store, account, schedule_id)
    spans, versions, operations = _edited_layers(store, account, stored, change, at)
    edited = replace(
        stored,
        name=change.name,
        description=change.description,
        time_zone=change.time_zone,
        team_ids=tuple(change.team_ids),
        version=stored.version + 1,
        updated_at=timestamp(now),
        spans=tuple(spans),
        versions=tuple(versions),
    )
    checks, failures = _team_checks(store, account, change.team_ids)
    head = _conditioned(store, schedule_item(account, edited), stored.version)
    overrides = overrides_reader(store, account, schedule_id)
    _commit(store, account, (edited, overrides, now), [head, *operations, *checks],
            [None] * (1 + len(operations)) + failures)  # fmt: skip
    return get_schedule(store, caller, schedule_id)


def delete_schedule(store: Store, caller: Caller, schedule_id: str) -> None:
    """The schedule (freeing its place in the account's count), then its versions and
    overrides (the schedule first: from then on it is not found, whatever is left to
    delete)."""
    account = caller.account_id
    stored = read_schedule(store, account, schedule_id)
    key = (teams_partition(account), schedule_sort_key(schedule_id))
    head = _conditioned(store, {**item_key(*key)}, stored.version, delete=True)
    counted(lambda: store.transact_growing(
        lambda: Transaction(
            [
                labelled(head),
                *cleared(store, account, schedule_id),
                count_move(store, account, Limited.SCHEDULES, -1),
            ],
            None,
        )
    ))  # fmt: skip
    parts = [
        *store.query_partition(key[0], prefix=schedule_versions_prefix(schedule_id)),
        *store.query_partition(key[0], prefix=schedule_overrides_prefix(schedule_id)),
        *store.query_partition(key[0], prefix=schedule_override_ids_prefix(schedule_id)),
    ]
    pk, sk = TABLE_SCHEMA.partition_key, TABLE_SCHEMA.sort_key
    keys = [item_key(item[pk]["S"], item[sk]["S"]) for item in parts]
    keys.append(item_key(key[0], feed_sort_key(schedule_id)))  # its calendar feed, if any
    for start in range(0, len(keys), 25):
        requests = [{"DeleteRequest": {"Key": k}} for k in keys[start : start + 25]]
        pending = {store.table_name: requests}
        while pending:
            response = store.client.batch_write_item(RequestItems=pending)  # type: ignore[arg-type]
            pending = response.get("UnprocessedItems") or {}  # type: ignore[assignment]


def create_override(
    store: Store, caller: Caller, schedule_id: str, request: OverrideRequest
) -> ScheduleOverride:
    """The override (a start in the past is now), with the checks that the schedule and the
    user are the account's, moving the schedule's version."""
    account, now = caller.account_id, store.clock()
    if request.end <= now:
        raise ScheduleTimesError("end: must be in the future (the past is read-only)")
    stored = read_schedule(store, account, schedule_id)
    if future_override_count(store, account, schedule_id, now) >= MAX_FUTURE_OVERRIDES:
        raise TooManyOverridesError(
            f"a schedule holds at most {MAX_FUTURE_OVERRIDES:,} overrides not yet ended: delete one"
        )
    override = Override(
        new_id("ovr"), max(request.start, now), request.end, request.user_id, now,
        sequence=stored.version + 1,
    )  # fmt: skip
    user_check = store.exists_check(user_partition(account, request.user_id), PROFILE_SK)
    on_it = sorted({*stored.override_user_ids, request.user_id})
    moved = replace(_moved(stored, now), override_user_ids=tuple(on_it))
    operations = [
        _conditioned(store, schedule_item(account, moved), stored.version),
        store.put_operation(override_item(account, schedule_id, override), new=True),
        store.put_operation(_override_pointer(account, schedule_id, override), new=True),
        user_check,
    ]
    missing = NotFoundError(f"user {request.user_id} not found in this account")
    overrides = _adjusted(overrides_reader(store, account, schedule_id), override)
    _commit(store, account, (moved, overrides, now), operations,
            [None, None, None, missing])  # fmt: skip
    return _shown_override(override)


def list_overrides(
    store: Store,
    caller: Caller,
    schedule_id: str,
    since: datetime | None = None,
    until: datetime | None = None,
) -> OverrideList:
    """The schedule's overrides that meet [since, until) (now and a week on by default),
    by end."""
    since, until = asked_range(since, until, store.clock())
    read_schedule(store, caller.account_id, schedule_id)
    found = overrides_between(store, caller.account_id, schedule_id, since, until)
    return OverrideList(overrides=[_shown_override(o) for o in found])


def delete_override(store: Store, caller: Caller, schedule_id: str, override_id: str) -> None:
    """The override, if it has not ended (409 if it has); one under way ends now, the part
    that was on call kept."""
    account, now = caller.account_id, store.clock()
    stored = read_schedule(store, account, schedule_id)
    pointer = store.get(
        teams_partition(account), schedule_override_id_sort_key(schedule_id, override_id)
    )
    if pointer is None:
        raise NotFoundError(f"override {override_id} not found in schedule {schedule_id}")
    override = override_from(pointer)
    if override.end <= now:
        raise PastOverrideError(
            f"override {override_id} ended at {timestamp(override.end)}: who was on call "
            "in the past stays as it was"
        )
    old = (
        teams_partition(account),
        schedule_override_sort_key(schedule_id, timestamp(override.end), override_id),
    )
    operations = [
        _conditioned(store, schedule_item(account, _moved(stored, now)), stored.version),
        store.delete_operation(*old),
    ]
    ended = replace(override, end=now) if override.start < now else None
    if ended is not None:  # under way: it ends now
        operations += [
            store.put_operation(override_item(account, schedule_id, ended)),
            store.put_operation(_override_pointer(account, schedule_id, ended)),
        ]
    else:
        operations.append(
            store.delete_operation(
                teams_partition(account), schedule_override_id_sort_key(schedule_id, override_id)
            )
        )
    overrides = _adjusted(overrides_reader(store, account, schedule_id), ended, override_id)
    _commit(store, account, (_moved(stored, now), overrides, now), operations, [])


def _commit(
    store: Store,
    account: str,
    after: tuple[StoredSchedule, OverridesIn, datetime],
    operations: Sequence[Item],
    failures: Sequence[Failure],
) -> None:
    """`operations` (operation i failing with `failures[i]`, None past its end) in one
    transaction with the schedule's current and next shift as `after` has them (the
    schedule, its overrides and the time, once the change commits) and its members."""
    schedule, overrides, at = after
    known = known_at(schedule, overrides, at)
    fixed = [
        labelled(operation, failures[index] if index < len(failures) else None)
        for index, operation in enumerate(operations)
    ]
    members = labelled(store.put_operation(members_item(account, schedule)))
    transact_with_now(store, [*fixed, members], account, known)


def _adjusted(read: OverridesIn, added: Override | None, removed: str | None = None) -> OverridesIn:
    """`read` as it will be once the change commits: `added` in (replacing an override of
    its id), `removed` out."""

    def overrides(since: datetime, until: datetime) -> list[Override]:
        gone = {removed, None if added is None else added.id}
        kept = [o for o in read(since, until) if o.id not in gone]
        if added is not None and added.start < until and added.end > since:
            kept.append(added)
        return kept

    return overrides


def _override_pointer(account: str, schedule_id: str, override: Override) -> Item:
    item = override_item(account, schedule_id, override)
    item[TABLE_SCHEMA.sort_key] = {"S": schedule_override_id_sort_key(schedule_id, override.id)}
    item["Type"] = {"S": "schedule_override_id"}
    return item


def _shown_override(override: Override) -> ScheduleOverride:
    return ScheduleOverride(
        id=override.id,
        start=timestamp(override.start),
        end=timestamp(override.end),
        user=UserReference(id=override.user_id),
        created_at=timestamp(override.created),
    )


def _moved(stored: StoredSchedule, now: datetime) -> StoredSchedule:
    return replace(stored, version=stored.version + 1, updated_at=timestamp(now))


def _conditioned(store: Store, item: Item, version: int, *, delete: bool = False) -> Item:
    """A Put of the schedule (or a Delete of its key) only while its version is `version`."""
    condition = {
        "ConditionExpression": "version = :version",
        "ExpressionAttributeValues": {":version": {"N": str(version)}},
    }
    if delete:
        return {"Delete": {"TableName": store.table_name, "Key": item, **condition}}
    return {"Put": {"TableName": store.table_name, "Item": item, **condition}}


def _span(name: str, start: datetime, end: datetime | None) -> LayerSpan:
    return LayerSpan(name, timestamp(start), None if end is None else timestamp(end))


def _edited_layers(
    store: Store, account: str, stored: StoredSchedule, change: ScheduleChange, at: datetime
) -> tuple[list[LayerSpan], list[tuple[LayerVersion, ...]], list[Item]]:
    """Each layer's span and versions as `change` has them from `at`, and the writes: a
    version from `at` where the rotation changes (those it replaces, which had not yet
    taken effect, deleted), layers left out ending at `at`, new ones starting no earlier."""
    spans: list[LayerSpan] = []
    versions: list[tuple[LayerVersion, ...]] = []
    operations: list[Item] = []
    layers = stored.layers()
    for index, request in enumerate(change.schedule_layers):
        wanted = request.version(change.time_zone, at)
        if index >= len(layers):  # a new layer
            start = max(request.start, at)
            first = replace(wanted, effective_from=start)
            spans.append(_span(request.name, start, request.end))
            versions.append((first,))
            operations.append(store.put_operation(version_item(account, stored.id, index, first)))
            continue
        layer = layers[index]
        start = layer.start if layer.start <= at else max(request.start, at)
        end = None if request.end is None else max(request.end, at)
        spans.append(_span(request.name, start, end))
        kept = tuple(v for v in layer.versions if v.effective_from <= at)
        if replace(version_at(layer, at), effective_from=at) == wanted and len(kept) == len(
            layer.versions
        ):
            versions.append(layer.versions)
            continue
        dropped = [v for v in layer.versions if v.effective_from > at]
        added = wanted if kept else replace(wanted, effective_from=start)
        pending = [v for v in (*kept, added) if v.effective_from > store.clock()]
        if len(pending) > MAX_PENDING_VERSIONS:
            raise TooManyPendingVersionsError(
                f"schedule_layers[{index}]: at most {MAX_PENDING_VERSIONS} edits of a layer "
                "may wait to take effect; edit from an earlier effective_at (it replaces "
                "those after it)"
            )
        versions.append((*kept, added))
        operations.append(store.put_operation(version_item(account, stored.id, index, added)))
        operations += [
            store.delete_operation(
                teams_partition(account),
                schedule_version_sort_key(stored.id, index, timestamp(v.effective_from)),
            )
            for v in dropped
        ]
    for index in range(len(change.schedule_layers), len(layers)):  # left out: ends at `at`
        layer = layers[index]
        end = at if layer.end is None else min(layer.end, at)
        spans.append(_span(stored.spans[index].name, layer.start, max(end, layer.start)))
        versions.append(layer.versions)
    return spans, versions, operations


def _as_request(stored: StoredSchedule, now: datetime) -> ScheduleRequest:
    """The schedule as a request: each layer as the version in force now defines it."""
    layers = stored.layers()
    return ScheduleRequest.model_validate(
        {
            "name": stored.name,
            "description": stored.description,
            "time_zone": stored.time_zone,
            "team_ids": list(stored.team_ids),
            "schedule_layers": [
                _layer_request(span, layer, version_at(layer, now))
                for span, layer in zip(stored.spans, layers, strict=True)
            ],
        }
    )


def _layer_request(span: LayerSpan, layer: Layer, version: LayerVersion) -> dict[str, object]:
    return {
        "name": span.name,
        "start": layer.start,
        "end": layer.end,
        "users": [{"user_id": user} for user in version.users],
        "rotation_virtual_start": version.rotation_virtual_start,
        "rotation_turn_length_seconds": int(version.turn_length.total_seconds()),
        "restrictions": [
            {
                "type": r.type.value,
                "start_time_of_day": r.start_time_of_day.isoformat(),
                "duration_seconds": int(r.duration.total_seconds()),
                **(
                    {"start_day_of_week": r.start_day_of_week}
                    if r.type.value.startswith("weekly")
                    else {}
                ),
            }
            for r in version.restrictions
        ],
    }


def _summary(item: Item) -> ScheduleSummary:
    values = deserialize(item)
    return ScheduleSummary.model_validate(
        {name: values.get(name) for name in ScheduleSummary.model_fields}
    )


def _version_puts(
    store: Store, account: str, schedule_id: str, versions: Sequence[Sequence[LayerVersion]]
) -> list[Item]:
    return [
        store.put_operation(version_item(account, schedule_id, index, version), new=True)
        for index, layer in enumerate(versions)
        for version in layer
    ]


def _team_checks(
    store: Store, account: str, team_ids: Sequence[str]
) -> tuple[list[Item], list[DomainError | None]]:
    checks = [store.exists_check(teams_partition(account), team) for team in team_ids]
    failures: list[DomainError | None] = [
        NotFoundError(f"team {team} not found in this account") for team in team_ids
    ]
    return checks, failures


def _require_users(store: Store, account: str, request: ScheduleRequest) -> None:
    """404 naming the first of the request's users who is not the account's."""
    wanted = list(
        dict.fromkeys(u.user_id for layer in request.schedule_layers for u in layer.users)
    )
    keys = [(user_partition(account, user), PROFILE_SK) for user in wanted]
    found = {item["id"]["S"] for item in store.batch_get(keys, projection="id")}
    missing = next((user for user in wanted if user not in found), None)
    if missing is not None:
        raise NotFoundError(f"user {missing} not found in this account")
