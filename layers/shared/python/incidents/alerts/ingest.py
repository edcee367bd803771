"""Alerts in: a trigger opens an incident for its key or joins the key's open one; an
acknowledge or a resolve moves the key's incident. Exactly once per alert under retries and
races, and cheap on a hot key.

- **One incident per key**: the key's item (``<acct>#alertkey``, 16 shards by key) names
  its incident. The create that opens one claims the item in its own transaction
  (absent, or still naming the resolved incident it replaces), so of 100 racing first
  triggers one opens the incident and the others, refused, join it.
- **Grouping**: a trigger whose key names no open incident joins its group's, if its
  integration groups alerts (`incidents.alerts.grouping`): its key's item then names
  that incident.
- **Exactly once**: each alert writes a *seen* item (`incidents.alerts.seen`: a digest of
  the integration and the body, kept a few minutes) in the transaction that counts it; a
  retry of the same body fails there and answers what the first one did.
- **Hot keys**: a joining alert is two writes in one transaction, the seen item and an add
  to the incident's sharded alert counter (`dynashard.ShardedCounter`, 8 items): no write
  to the incident itself. Its timeline gets one ``alert.received`` event per key a minute
  at most (`EVENT_EVERY`; the first alert to join writes one at once), naming how many
  alerts came since the last one; the claim on
  that minute is a conditional write on the key's item, so racing alerts write one event.
- **Order**: an acknowledge or a resolve whose ``payload.timestamp`` is older than the
  key's incident was opened is for an earlier incident of the key and moves nothing
  (``ignored``); a trigger after the key's incident was resolved, by an alert or a person,
  opens a new incident.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dynashard import build_key, calculated_shard, sharded_key
from dynashard.query import Item
from dynashard.resharding import Operation, Transaction
from incidents.alerts.grouping import Group, GroupMovedError, read_group
from incidents.alerts.models import (
    SEVERITIES,
    AlertAccepted,
    AlertEvent,
    AlertStatus,
    EventAction,
    Integration,
    MoveAlert,
    TriggerAlert,
    title_of,
)
from incidents.alerts.seen import SeenError, body_digest, seen_answer, seen_put, tries
from incidents.alerts.suppression import covering_window, kept
from incidents.alerts.trimmed import size_of, trimmed
from incidents.errors import (
    DomainError,
    PreconditionFailedError,
    ThrottledError,
    VersionConflictError,
)
from incidents.escalation.engine import escalation_for
from incidents.incident.commands import CHANGE_ATTEMPTS, load_summary, update_incident
from incidents.incident.create import create_incident
from incidents.items import MAX_DETAILS_BYTES, deserialize, serialize
from incidents.models import EventType, IncidentSummary, Status, timestamp
from incidents.requests import CreateIncident, UpdateIncident
from incidents.store import Caller, Failure, Store, labelled, new_id
from incidents.table import PK, SK, item_key
from incidents.timeline.events import (
    change_operations,
    load_counted,
    pause_before_retry,
    require_counted,
)
from incidents.timers.schedule import Timer, TimerKind, set_timer

KEY_SHARDS = 16
KEY_BYTES = 255
"""A dedup key's bytes kept as they are in its item's sort key; a longer one is hashed."""
EVENT_EVERY = timedelta(minutes=1)
COUNTER_SHARDS = 8
NEVER = ""
"""A key's last ``alert.received`` before its first: earlier than any timestamp."""
ALERT_SECONDS = 6.0
"""How long an alert that keeps losing races on its key (a trigger to open or join, an
acknowledge or resolve to move the incident) tries again, with jittered back-off: the
Events API has no 409, and a sender that retries only 5xx and 429 would drop the alert.
Past it (within the function's 10 s) the answer is a 429, which every sender retries."""
ALERT_DETAILS = "alert"
"""Where an incident opened by an alert keeps the alert, in its details."""


class KeyTakenError(DomainError):
    """Another trigger opened the key's incident first (never leaves this module)."""


class ResolvedMeanwhileError(DomainError):
    """The key's incident was resolved after the trigger read it open (never leaves this
    module: the trigger opens the key's next incident)."""


@dataclass(frozen=True)
class KeyState:
    """What the key's item says."""

    incident_id: str
    opened_at: str
    last_event_at: str
    counted_at_event: int


@dataclass(frozen=True)
class AlertKey:
    """One integration's dedup key, in its account, with the store to reach it."""

    store: Store
    caller: Caller
    integration: Integration
    dedup_key: str

    @property
    def account(self) -> str:
        return self.caller.account_id

    def item_key(self) -> tuple[str, str]:
        """(PK, SK) of the key's item: ``<acct>#alertkey#<shard>``, ``<integration>#<key>``
        (a key longer than `KEY_BYTES` in UTF-8 by its SHA-256, so 255 characters of any
        script stay within DynamoDB's 1,024-byte sort key)."""
        stored = self.dedup_key
        if len(stored.encode()) > KEY_BYTES:
            stored = "sha256:" + hashlib.sha256(stored.encode()).hexdigest()
        base, sort_key = build_key(self.account, "alertkey"), f"{self.integration.id}#{stored}"
        shard = calculated_shard(base, sort_key, KEY_SHARDS)
        return sharded_key(base, shard, KEY_SHARDS), sort_key

    def state(self) -> KeyState | None:
        """What the key's item says (strongly consistent), None before its first trigger."""
        item = self.store.get(*self.item_key())
        if item is None:
            return None
        values = deserialize(item)
        return KeyState(
            incident_id=values["incident_id"],
            opened_at=values["opened_at"],
            last_event_at=values["last_event_at"],
            counted_at_event=int(values.get("counted_at_event", 1)),
        )

    def answer(self, status: AlertStatus, incident_id: str | None) -> AlertAccepted:
        return AlertAccepted(status=status, dedup_key=self.dedup_key, incident_id=incident_id)


def ingest_alert(
    store: Store, caller: Caller, integration: Integration, alert: AlertEvent
) -> AlertAccepted:
    """Apply one alert of `integration` (acting as `caller`); what it did. During a
    maintenance window of the integration or its team it opens and moves nothing: it is
    kept as suppressed (`incidents.maintenance`)."""
    key = AlertKey(store, caller, integration, alert.dedup_key or new_id("alert"))
    window = covering_window(store, caller.account_id, integration)
    if window is not None:
        return _suppressed_once(key, alert, kept(window, key, alert))
    if isinstance(alert, TriggerAlert):
        return _trigger(key, alert)
    return _move(key, alert)


def alert_count(store: Store, account: str, incident_id: str) -> int:
    """How many alerts the incident received (the one that opened it included)."""
    return store.counter(COUNTER_SHARDS).total(_count_base(account, incident_id))


def _suppressed_once(
    key: AlertKey, alert: AlertEvent, writes: list[Operation[Failure]]
) -> AlertAccepted:
    """`writes` (what a maintenance window keeps of the alert) with the alert's seen item,
    in one transaction: a retry of the same alert writes nothing again and gets the answer
    its first delivery got, as a trigger's retry does."""
    digest = _digest(key, alert)
    answer = key.answer(AlertStatus.SUPPRESSED, None)
    seen = labelled(seen_put(key.store, key.account, digest, answer),
                    SeenError("this alert was counted"))  # fmt: skip
    try:
        key.store.transact_growing(lambda: Transaction([seen, *writes], None))
    except SeenError:
        return seen_answer(key.store, key.account, digest, AlertAccepted) or answer
    return answer


def _digest(key: AlertKey, alert: AlertEvent) -> str:
    return body_digest(key.integration.id, "alert", alert)


def _trigger(key: AlertKey, alert: TriggerAlert) -> AlertAccepted:
    store, account = key.store, key.account
    digest = _digest(key, alert)
    for _ in tries(ALERT_SECONDS):
        state = key.state()
        open_at = _open_at(key, state.incident_id if state else None)
        try:
            if state is not None and open_at is not None:
                return _join(key, alert, digest, state, open_at)
            group = read_group(store, account, key.integration, alert)
            joined = _group_incident(key, group)
            if group is not None and joined is not None:
                return _attach(key, alert, digest, state, group, joined)
            return _open(key, alert, digest, state, group)
        except SeenError:  # a retry of an alert that was counted: its first answer
            seen = seen_answer(store, account, digest, AlertAccepted)
            if seen is not None:
                return seen
        except (KeyTakenError, GroupMovedError, ResolvedMeanwhileError, VersionConflictError):
            continue  # read the key (and its group) again
    raise ThrottledError("the alert's key is busy; retry with back-off")


def _open(
    key: AlertKey,
    alert: TriggerAlert,
    digest: str,
    replaced: KeyState | None,
    group: Group | None,
) -> AlertAccepted:
    """A new incident for the key, claiming the key (and its group) in the create's
    transaction."""
    payload = alert.payload
    integration, store = key.integration, key.store
    request = CreateIncident(
        title=title_of(payload.summary),
        severity=integration.default_severity or SEVERITIES[payload.severity],
        details={ALERT_DETAILS: _described(key, alert)},
        teams=[integration.team_id] if integration.team_id else [],
    )
    values = {
        "incident_id": "",
        "opened_at": _sent_at(store, alert),
        "last_event_at": NEVER,  # the first alert to join writes an event at once
    }

    gone = replaced.incident_id if replaced else None
    urgency = integration.urgency_at(store.clock())
    escalates = escalation_for(store, key.account, integration.escalation_policy_id, urgency)

    def claim(summary: IncidentSummary) -> list[Operation[Failure]]:
        answer = key.answer(AlertStatus.OPENED, summary.id)
        return [
            labelled(_claim_key(key, {**values, "incident_id": summary.id}, replaced),
                     KeyTakenError("the key's incident was opened by another trigger")),
            labelled(seen_put(store, key.account, digest, answer, gone),
                     SeenError("this alert was counted")),
            labelled(store.counter(COUNTER_SHARDS).add(_count_base(key.account, summary.id))),
            *_auto_resolve(key, summary.id),
            *(group.puts(store, summary.id) if group else []),
            *escalates(summary.id),
        ]  # fmt: skip

    incident = create_incident(store, key.caller, request, also=claim)
    return key.answer(AlertStatus.OPENED, incident.summary.id)


def _join(
    key: AlertKey, alert: TriggerAlert, digest: str, state: KeyState, open_at: str
) -> AlertAccepted:
    """Count the alert on the key's open incident (and, once a minute, note it), on the
    condition that it is still open where it was read (`open_at`, its summary's partition):
    a trigger racing a resolve opens the key's next incident instead of joining one that
    is resolved."""
    store = key.store
    answer = key.answer(AlertStatus.ATTACHED, state.incident_id)
    base = _count_base(key.account, state.incident_id)
    still_open = _still_open(store, open_at, state.incident_id)
    try:
        store.transact_growing(
            lambda: Transaction(
                [
                    labelled(seen_put(store, key.account, digest, answer),
                             SeenError("this alert was counted")),
                    labelled(store.counter(COUNTER_SHARDS).add(base)),
                    labelled(still_open, ResolvedMeanwhileError("resolved")),
                    *_auto_resolve(key, state.incident_id),  # grows the due index if hot
                ],
                None,
            )
        )  # fmt: skip
    except SeenError:
        return seen_answer(store, key.account, digest, AlertAccepted) or answer
    _note_alerts(key, alert, state)
    return answer


def _attach(  # noqa: PLR0917 (the trigger's reads, each once)
    key: AlertKey,
    alert: TriggerAlert,
    digest: str,
    replaced: KeyState | None,
    group: Group,
    joined: tuple[str, str],
) -> AlertAccepted:
    """Join the group's open incident (`joined`: its id and its summary's partition): the
    key's item comes to name it, the group items move to now, and the alert is counted,
    in one transaction on the incident still being open. Its first ``alert.received`` event
    is written at once, counting this alert alone."""
    store = key.store
    incident_id, open_at = joined
    answer = key.answer(AlertStatus.ATTACHED, incident_id)
    before = alert_count(store, key.account, incident_id)
    opened_at = _sent_at(store, alert)
    values = {"incident_id": incident_id, "opened_at": opened_at, "last_event_at": NEVER,
              "counted_at_event": before}  # fmt: skip
    store.transact_growing(
        lambda: Transaction(
            [
                labelled(_claim_key(key, values, replaced),
                         KeyTakenError("the key's incident was opened by another trigger")),
                labelled(seen_put(store, key.account, digest, answer,
                                   replaced.incident_id if replaced else None),
                         SeenError("this alert was counted")),
                labelled(store.counter(COUNTER_SHARDS).add(_count_base(key.account, incident_id))),
                labelled(_still_open(store, open_at, incident_id),
                         ResolvedMeanwhileError("resolved")),
                *group.puts(store, incident_id),
                *_auto_resolve(key, incident_id),
            ],
            None,
        )
    )  # fmt: skip
    _note_alerts(key, alert, KeyState(incident_id, opened_at, NEVER, before))
    return answer


def _group_incident(key: AlertKey, group: Group | None) -> tuple[str, str] | None:
    """The open incident the trigger's group offers (its id and summary's partition)."""
    if group is None:
        return None
    for incident_id in group.candidates(key.store.clock()):
        open_at = _open_at(key, incident_id)
        if open_at is not None:
            return incident_id, open_at
    return None


def _sent_at(store: Store, alert: TriggerAlert) -> str:
    """When the alert was sent (one ahead of the server's clock: now)."""
    now = store.clock()
    sent = alert.payload.timestamp
    return timestamp(min(sent, now) if sent else now)


def _still_open(store: Store, open_at: str, incident_id: str) -> Item:
    """A check that the incident is open at its summary's partition as read."""
    return {
        "ConditionCheck": {
            "TableName": store.table_name,
            "Key": item_key(open_at, incident_id),
            "ConditionExpression": f"attribute_exists({PK}) AND #status <> :resolved",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {":resolved": {"S": Status.RESOLVED.value}},
        }
    }


def _note_alerts(key: AlertKey, alert: TriggerAlert, state: KeyState) -> None:
    """An ``alert.received`` event, if the key's last one is `EVENT_EVERY` old and this
    alert wins the claim on the next."""
    store, now = key.store, key.store.clock()
    if state.last_event_at > timestamp(now - EVENT_EVERY):
        return
    total = alert_count(store, key.account, state.incident_id)
    if not _claim_event(key, state, now, total):
        return
    payload = alert.payload
    received = {
        "integration_id": key.integration.id,
        "dedup_key": key.dedup_key,
        "summary": title_of(payload.summary),
        "source": payload.source,
        "severity": payload.severity.value,
        "alerts": max(1, total - state.counted_at_event),
    }
    for attempt in range(CHANGE_ATTEMPTS):
        counted = require_counted(store, key.caller, state.incident_id)
        if counted.summary.status is Status.RESOLVED:
            return  # counted before the resolve; a note after it would read as swallowed
        operations, _ = change_operations(
            store, key.caller, counted, EventType.ALERT_RECEIVED, alert=received
        )
        try:
            store.transact(operations, [None] * len(operations))
            return
        except VersionConflictError:
            pause_before_retry(attempt)


def _move(key: AlertKey, alert: MoveAlert) -> AlertAccepted:
    """An acknowledge or a resolve: the key's incident moves, unless the alert is older.
    One that loses a race to another change of the incident tries again until it has moved
    it (a resolve that loses to an acknowledge still resolves)."""
    for _ in tries(ALERT_SECONDS):
        try:
            return _move_once(key, alert)
        except (VersionConflictError, PreconditionFailedError):
            continue
    raise ThrottledError("the alert's incident is busy; retry with back-off")


def _move_once(key: AlertKey, alert: MoveAlert) -> AlertAccepted:
    state = key.state()
    sent = alert.payload.timestamp if alert.payload else None
    if state is None or (sent is not None and timestamp(sent) < state.opened_at):
        return key.answer(AlertStatus.IGNORED, None)
    current = load_summary(key.store, key.caller, state.incident_id)
    resolve = alert.event_action is EventAction.RESOLVE
    if current.status is Status.RESOLVED and not resolve:
        return key.answer(AlertStatus.IGNORED, None)
    if current.status is not Status.RESOLVED:  # on the version read: an acknowledge must
        status = Status.RESOLVED if resolve else Status.ACKNOWLEDGED  # not reopen a resolve
        change = UpdateIncident(status=status)
        update_incident(key.store, key.caller, state.incident_id, change, current.version)
    done = AlertStatus.RESOLVED if resolve else AlertStatus.ACKNOWLEDGED
    return key.answer(done, state.incident_id)


def _auto_resolve(key: AlertKey, incident_id: str) -> list[Operation[Failure]]:
    """The Put that sets (or moves on) the incident's auto-resolve timer, in the alert's
    transaction, if its integration has an ``auto_resolve_timeout``."""
    timeout = key.integration.auto_resolve_timeout
    if timeout is None:
        return []
    due = key.store.clock() + timedelta(seconds=timeout)
    return [set_timer(key.store, Timer(key.account, TimerKind.AUTO_RESOLVE, incident_id, due))]


def _open_at(key: AlertKey, incident_id: str | None) -> str | None:
    """The partition of the incident's summary if it is open, else None."""
    if incident_id is None:
        return None
    counted = load_counted(key.store, key.caller, incident_id)
    if counted is None or counted.summary.status is Status.RESOLVED:
        return None
    return counted.pk


def _described(key: AlertKey, alert: TriggerAlert) -> dict[str, Any]:
    """The alert as the incident's details keep it: the summary as sent where it had line
    breaks, and its custom details trimmed to what an incident keeps (`trimmed`)."""
    payload = alert.payload
    sent = {"summary_sent": payload.sent_summary} if payload.sent_summary else {}
    described: dict[str, Any] = {
        "integration_id": key.integration.id,
        "dedup_key": key.dedup_key,
        **payload.model_dump(
            mode="json", exclude_none=True, by_alias=True, exclude={"custom_details"}
        ),
        **sent,
        **alert.model_dump(
            mode="json", exclude_none=True, include={"links", "images", "client", "client_url"}
        ),
    }
    if payload.custom_details is not None:
        room = MAX_DETAILS_BYTES - size_of({ALERT_DETAILS: {**described, "custom_details": {}}})
        described["custom_details"] = trimmed(payload.custom_details, room)
    return described


def _claim_key(key: AlertKey, values: dict[str, Any], replaced: KeyState | None) -> Item:
    """The Put that makes the key name a new incident: where it names none, or still names
    the resolved one it replaces."""
    pk, sk = key.item_key()
    put: dict[str, Any] = {
        "TableName": key.store.table_name,
        "Item": serialize({PK: pk, SK: sk, "Type": "alert_key", "counted_at_event": 1,
                           **values}),
    }  # fmt: skip
    if replaced is None:
        put["ConditionExpression"] = f"attribute_not_exists({PK})"
    else:
        put["ConditionExpression"] = "incident_id = :replaced"
        put["ExpressionAttributeValues"] = {":replaced": {"S": replaced.incident_id}}
    return {"Put": put}


def _claim_event(key: AlertKey, state: KeyState, now: datetime, total: int) -> bool:
    """Whether this alert writes the key's next ``alert.received`` event (one racer does)."""
    pk, sk = key.item_key()
    client = key.store.client
    try:
        client.update_item(
            TableName=key.store.table_name,
            Key=item_key(pk, sk),
            UpdateExpression="SET last_event_at = :now, counted_at_event = :total",
            ConditionExpression="last_event_at = :seen AND incident_id = :incident",
            ExpressionAttributeValues={
                ":now": {"S": timestamp(now)},
                ":total": {"N": str(total)},
                ":seen": {"S": state.last_event_at},
                ":incident": {"S": state.incident_id},
            },
        )
    except client.exceptions.ConditionalCheckFailedException:
        return False
    return True


def _count_base(account: str, incident_id: str) -> str:
    return build_key(account, incident_id, "alerts")
