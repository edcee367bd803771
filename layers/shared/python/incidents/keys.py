"""Every key of the incident domain, built only through `dynashard` (README "Key schema").

Every partition key starts with the account id, which comes from the caller's claims, so
no key built here can reach another account's items.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from dynashard import ShardMetaKey, build_key, calculated_shard, sharded_key
from dynashard.keys import SEPARATOR, WeightedShards
from incidents.models import State

DETAILS_SK = "data"
PROFILE_SK = "profile"
COUNTER_SK = "incident_number"
CREATE_ONCE_SHARDS = 16
DEFAULT_SUMMARY_SHARDS = 16
DEFAULT_STATE_SHARDS = {State.OPEN.value: 8, State.CLOSED.value: 32}
DEFAULT_EVENT_SHARDS = 16
EVENT_PREFIX = "event"
SEQ_DIGITS = 10


@dataclass(frozen=True)
class ShardConfig:
    """The stage's shard counts of the account families: the count of an account without
    a map, and every account's maximum (`incidents.tenant_shards`); participants' counts
    are dynamic (see `participant_meta`)."""

    summary_shards: int = DEFAULT_SUMMARY_SHARDS
    state_shards: WeightedShards = field(
        default_factory=lambda: WeightedShards(DEFAULT_STATE_SHARDS)
    )
    event_shards: int = DEFAULT_EVENT_SHARDS


def summary_base(account: str) -> str:
    """``<acct>#inc``: the base of the summaries' sharded partition keys."""
    return build_key(account, "inc")


def summary_key(account: str, incident_id: str, count: int) -> tuple[str, str]:
    """(PK, SK) of a summary under `count` shards: ``<acct>#inc#<calculated shard>``,
    ``<incident id>`` (the count is the account's, `incidents.tenant_shards`)."""
    base = summary_base(account)
    return sharded_key(base, calculated_shard(base, incident_id, count), count), incident_id


def state_base(account: str, state: State) -> str:
    """``<acct>#inc#<STATE>``: the base of GSI2, the account's incidents by state."""
    return build_key(account, "inc", state.value)


def state_index_key(
    account: str, state: State, incident_id: str, created_at: str, count: int
) -> tuple[str, str]:
    """(GSI2PK, GSI2SK) of a summary under `count` shards of its state's list:
    calculated shard, ``<CreatedAt>#<id>``."""
    base = state_base(account, state)
    shard = calculated_shard(base, incident_id, count)
    return sharded_key(base, shard, count), build_key(created_at, incident_id, kind="sort")


ESCALATION_SK = "escalation"
PAGE_PREFIX = "page#"
PAGE_TYPE = "page"
"""A page's ``Type``: its insert on the stream decides its notifications."""


def escalation_key(account: str, incident_id: str) -> tuple[str, str]:
    """(PK, SK) of an incident's escalation: the policy it started with and where it is,
    in the incident's own partition (beside its details and its pages)."""
    return build_key(account, incident_id), ESCALATION_SK


def page_sort_key(generation: int, loop: int, level: int, user_id: str) -> str:
    """``page#<generation>#<loop>#<level>#<user>``: one page decided, once; generation,
    loop and level zero-padded so pages list in the order they were decided."""
    return f"{PAGE_PREFIX}{generation:04d}#{loop:02d}#{level:02d}#{user_id}"


NOTIFICATION_PREFIX = "notification#"


def notification_sort_key(page_sort_key: str, rule_id: str) -> str:
    """``notification#<generation>#<loop>#<level>#<user>#<rule>``: one notification rule
    of one page, decided once; listed in the order their pages were decided."""
    return f"{NOTIFICATION_PREFIX}{page_sort_key.removeprefix(PAGE_PREFIX)}#{rule_id}"


def details_key(account: str, incident_id: str) -> tuple[str, str]:
    """(PK, SK) of an incident's details: ``<acct>#<incident id>``, ``data``."""
    return build_key(account, incident_id), DETAILS_SK


def participations_partition(account: str, incident_id: str) -> str:
    """``<acct>#<incident id>#incpart``: every participation of one incident."""
    return build_key(account, incident_id, "incpart")


def participant_base(account: str, participant_id: str) -> str:
    """``<acct>#<participant id>#incpart``: the base of GSI1, a participant's incidents."""
    return build_key(account, participant_id, "incpart")


def participant_meta(account: str, participant_id: str) -> ShardMetaKey:
    """Where the participant's dynamic shard count lives."""
    return ShardMetaKey.for_tenant(account, participant_base(account, participant_id))


def participant_sort_key(state: State, created_at: str, incident_id: str) -> str:
    """GSI1SK of a participation: ``<STATE>#<CreatedAt>#<id>``, newest last."""
    return build_key(state.value, created_at, incident_id, kind="sort")


def participant_index_key(
    account: str, participant_id: str, incident_id: str, shard_count: int
) -> str:
    """GSI1PK of a participation under `shard_count` shards of its participant."""
    base = participant_base(account, participant_id)
    return sharded_key(base, calculated_shard(base, incident_id, shard_count), shard_count)


def integrations_partition(account: str) -> str:
    """``<acct>#integration``: the account's integrations."""
    return build_key(account, "integration")


def teams_partition(account: str) -> str:
    """``<acct>#team``: every team of the account."""
    return build_key(account, "team")


def users_partition(account: str) -> str:
    """``<acct>#user``: the account's users, one item each by id (seed 002's user list),
    and the item naming its owner."""
    return build_key(account, "user")


USER_PREFIX = "user_"
"""The sort-key prefix of the user items of `users_partition` (their ids)."""
OWNER_SK = "owner"
"""The item of `users_partition` written once, by the account's first user."""


def user_partition(account: str, user_id: str) -> str:
    """``<acct>#<user id>``: the user's profile and memberships."""
    return build_key(account, user_id)


def membership_sort_key(team_id: str) -> str:
    """``member#<team id>``."""
    return build_key("member", team_id, kind="sort")


def team_members_partition(account: str, team_id: str) -> str:
    """GSI1PK of memberships: ``<acct>#<team id>#members``."""
    return build_key(account, team_id, "members")


def number_sequence(account: str) -> str:
    """The PK of the account's incident numbers (`COUNTER_SK` its sort key)."""
    return build_key(account, "counter")


def counter_key(account: str) -> tuple[str, str]:
    """(PK, SK) of the account's incident number sequence."""
    return number_sequence(account), COUNTER_SK


def number_index_key(account: str, number: int) -> tuple[str, str]:
    """(GSI3PK, GSI3SK) of a summary: ``<acct>#number#<n>``, ``incident``. One partition a
    number, so a lookup by number is one key read and no partition runs hot."""
    return build_key(account, "number", str(number)), "incident"


def receipt_index_key(message_id: str) -> tuple[str, str]:
    """(GSI3PK, GSI3SK) of a message a provider took: ``receipt#<provider's id>``,
    ``message``. Not under an account: a provider's receipt names only its message, and a
    message id is one partition of its own (no partition runs hot)."""
    return build_key("receipt", message_id), "message"


def create_once_key(account: str, user_id: str, request_key: str) -> tuple[str, str]:
    """(PK, SK) of the guard a keyed create writes in its transaction: ``<acct>#creates``
    sharded by the key (a busy account's keyed creates spread over 16 partitions)."""
    base = build_key(account, "creates")
    digest = hashlib.sha256(request_key.encode()).hexdigest()  # any text, one fixed length
    sort_key = build_key(user_id, digest, kind="sort")
    shard = calculated_shard(base, sort_key, CREATE_ONCE_SHARDS)
    return sharded_key(base, shard, CREATE_ONCE_SHARDS), sort_key


def published_key(account: str, incident_id: str) -> tuple[str, str]:
    """(PK, SK) of the last `seq` of an incident the publisher sent out:
    ``<acct>#<incident id>#published`` / ``published``."""
    return build_key(account, incident_id, PUBLISHED), PUBLISHED


def event_key(account: str, incident_id: str, seq: int) -> tuple[str, str]:
    """(PK, SK) of an incident's event `seq`: beside its details, ``event#<seq>`` with a
    fixed width, so the timeline sorts by number."""
    return build_key(account, incident_id), build_key(
        EVENT_PREFIX, f"{seq:0{SEQ_DIGITS}d}", kind="sort"
    )


def timeline_prefix() -> str:
    """The sort-key prefix of every event of an incident's partition."""
    return EVENT_PREFIX + "#"


def events_base(account: str) -> str:
    """``<acct>#events``: the base of GSI2's account-wide event index."""
    return build_key(account, "events")


def event_index_key(account: str, event_id: str, at: str, count: int) -> tuple[str, str]:
    """(GSI2PK, GSI2SK) of an event under `count` shards: calculated shard by its id,
    ``<at>#<event id>``, so the account's events spread over its shards and merge back by
    time."""
    base = events_base(account)
    shard = calculated_shard(base, event_id, count)
    return sharded_key(base, shard, count), build_key(at, event_id, kind="sort")


TIMER_SHARDS = 16
SCHEDULE = "schedule"
"""The due-time index's own prefix: it spans accounts (only the sweep reads it; no caller's
request builds its keys), so it is the one partition key that starts with no account."""


def timer_key(account: str, kind: str, subject: str) -> tuple[str, str]:
    """(PK, SK) of a timer: ``<acct>#timer`` over 16 shards by its subject (a busy account's
    pings spread), ``<kind>#<subject>``: one timer per kind and subject."""
    base = build_key(account, "timer")
    sort_key = build_key(kind, subject, kind="sort")
    shard = calculated_shard(base, sort_key, TIMER_SHARDS)
    return sharded_key(base, shard, TIMER_SHARDS), sort_key


HEARTBEAT_SHARDS = 16


def heartbeat_base(account: str) -> str:
    """``<acct>#heartbeat``: the base of the account's heartbeats' partitions."""
    return build_key(account, "heartbeat")


def heartbeat_key(account: str, name: str) -> tuple[str, str]:
    """(PK, SK) of a heartbeat: 16 shards by name (each ping writes its heartbeat, so an
    account's pings spread), ``<name>``."""
    base = heartbeat_base(account)
    return sharded_key(base, calculated_shard(base, name, HEARTBEAT_SHARDS), HEARTBEAT_SHARDS), name


def account_count_key(account: str, subject: str) -> tuple[str, str]:
    """(PK, SK) of the account's count of `subject` (``heartbeats``, ``schedules``), which
    each create and delete moves in its transaction (`incidents.account_limits`)."""
    return build_key(account, "counts"), subject


LIVE_WINDOW_COPIES = 8
SUPPRESSED_SHARDS = 16


def maintenance_partition(account: str) -> str:
    """``<acct>#maintenance``: the account's maintenance windows, by id (written only when
    one is created, ended or deleted)."""
    return build_key(account, "maintenance")


def live_windows_partition(account: str, copy: int) -> str:
    """``<acct>#maintenance#live#<copy>``: one copy of the account's live set, the windows
    not yet ended. Every alert reads one copy, at random: 8 copies spread a storm's reads
    over 8 partitions."""
    return sharded_key(build_key(account, "maintenance", "live"), copy, LIVE_WINDOW_COPIES)


def live_window_key(account: str, copy: int, end_time: str, window_id: str) -> tuple[str, str]:
    """(PK, SK) of one copy of a window's entry in the live set: ``<end_time>#<window id>``,
    the end first, so a Query of the entries after now never reads a window that has ended."""
    return live_windows_partition(account, copy), build_key(end_time, window_id, kind="sort")


def live_windows_gate_key(account: str) -> tuple[str, str]:
    """(PK, SK) of the account's live set's version, which each create moves: two creates
    that counted the live set at the same time cannot both pass its cap."""
    return build_key(account, "maintenance", "gate"), "gate"


def suppressed_base(account: str, window_id: str) -> str:
    """``<acct>#<window id>#suppressed``: the base of a window's suppressed alerts."""
    return build_key(account, window_id, "suppressed")


def suppressed_key(account: str, window_id: str, alert_key: str) -> tuple[str, str]:
    """(PK, SK) of what a window kept of one alert key (``<integration>#<dedup key>``, as
    the key's own item names it): 16 shards by it, so a storm of keys spreads."""
    base = suppressed_base(account, window_id)
    shard = calculated_shard(base, alert_key, SUPPRESSED_SHARDS)
    return sharded_key(base, shard, SUPPRESSED_SHARDS), alert_key


def suppressed_count_base(account: str, window_id: str) -> str:
    """``<acct>#<window id>#alerts``: the base of a window's sharded count of alerts."""
    return build_key(account, window_id, "alerts")


def schedule_meta() -> ShardMetaKey:
    """Where the due-time index's shard count lives: one count for every minute's bucket."""
    return ShardMetaKey.for_tenant(SCHEDULE, build_key(SCHEDULE, "due"))


def due_bucket_base(minute: str) -> str:
    """``schedule#due#<YYYYMMDDHHMM>``: the base of one minute's due timers (GSI3)."""
    return build_key(SCHEDULE, "due", minute)


def due_index_key(minute: str, due_at: str, identity: str, count: int) -> tuple[str, str]:
    """(GSI3PK, GSI3SK) of a timer due at `due_at` in `minute`, under `count` shards:
    calculated shard by its `identity`, ``<due_at>#<identity>`` so a bucket reads in due
    order."""
    base = due_bucket_base(minute)
    shard = calculated_shard(base, identity, count)
    return sharded_key(base, shard, count), f"{due_at}#{identity}"


def sweep_marker_key() -> tuple[str, str]:
    """(PK, SK) of the sweep's progress: the first minute whose bucket it has not finished."""
    return build_key(SCHEDULE, "sweep"), "marker"


WEBHOOK_PREFIX = "wh_"
WEBHOOK_COUNT_SK = "count"
DELIVERIES = "deliveries"
PUBLISHED = "published"
ATTEMPTS = "attempts"
PARKED = "parked"


def webhooks_partition(account: str) -> str:
    """``<acct>#webhook``: the account's webhooks (``wh_...``) and their count (``count``)."""
    return build_key(account, "webhook")


def deliveries_partition(account: str, webhook_id: str) -> str:
    """``<acct>#<webhook id>#deliveries``: one webhook's delivery attempts."""
    return build_key(account, webhook_id, DELIVERIES)


def attempts_key(account: str, webhook_id: str, event_id: str) -> tuple[str, str]:
    """(PK, SK) of the attempts one event's delivery to one webhook has had:
    ``<acct>#<webhook id>#attempts`` / the event's id."""
    return build_key(account, webhook_id, ATTEMPTS), event_id


def parked_partition(account: str, webhook_id: str) -> str:
    """``<acct>#<webhook id>#parked``: one webhook's deliveries waiting out its circuit."""
    return build_key(account, webhook_id, PARKED)


def parked_sort_key(incident_id: str | None, seq: int | None, event_id: str) -> str:
    """``<incident id>#<seq, 10 digits>#<event id>`` (a test event: ``~test#…``): an
    incident's parked deliveries in order."""
    return build_key(incident_id or "~test", f"{seq or 0:010d}", event_id, kind="sort")


def parked_incident_prefix(incident_id: str | None) -> str:
    """The prefix of every parked sort key of one incident (`parked_sort_key`)."""
    return build_key(incident_id or "~test", kind="sort") + SEPARATOR


def delivery_sort_key(at: str, event_id: str, attempt: int) -> str:
    """``<at>#<event id>#<attempt>``: attempts by time, so the log reads newest first."""
    return build_key(at, event_id, f"{attempt:03d}", kind="sort")


def schedule_sort_key(schedule_id: str) -> str:
    """``schedule#<id>``: a schedule, in its account's teams partition (seed 002's: teams,
    schedules and overrides are read together and rarely written)."""
    return build_key("schedule", schedule_id, kind="sort")


def schedule_version_sort_key(schedule_id: str, layer: int, effective_from: str) -> str:
    """``schedule_version#<id>#<layer, 2 digits>#<effective from>``: a layer's versions in
    the order they take effect."""
    return build_key("schedule_version", schedule_id, f"{layer:02d}", effective_from, kind="sort")


def escalation_policy_sort_key(policy_id: str) -> str:
    """``escpolicy#<id>``: an escalation policy, in its account's teams partition (read with
    the schedules and teams it names)."""
    return build_key("escpolicy", policy_id, kind="sort")


def escalation_policies_prefix() -> str:
    """The prefix of every escalation policy's sort key."""
    return build_key("escpolicy", kind="sort") + SEPARATOR


def schedules_prefix() -> str:
    """The prefix of every schedule's sort key (none of its parts')."""
    return build_key("schedule", kind="sort") + SEPARATOR


def schedule_versions_prefix(schedule_id: str) -> str:
    """The prefix of every version sort key of one schedule."""
    return build_key("schedule_version", schedule_id, kind="sort") + SEPARATOR


def schedule_override_sort_key(schedule_id: str, end: str, override_id: str) -> str:
    """``schedule_override#<id>#<end>#<override id>``: by end, so a range's overrides are
    those from its start on (the ones that started before its end)."""
    return build_key("schedule_override", schedule_id, end, override_id, kind="sort")


def oncall_sort_key(schedule_id: str) -> str:
    """``oncall#<schedule id>``: a schedule's materialized current and next shift."""
    return build_key("oncall", schedule_id, kind="sort")


def oncall_members_sort_key(schedule_id: str) -> str:
    """``oncall_members#<schedule id>``: everyone who may have a shift on a schedule."""
    return build_key("oncall_members", schedule_id, kind="sort")


def oncall_members_prefix() -> str:
    """The prefix of every schedule's members item of an account's teams partition."""
    return build_key("oncall_members", kind="sort") + SEPARATOR


def oncalls_prefix() -> str:
    """The prefix of every materialized shift item of an account's teams partition."""
    return build_key("oncall", kind="sort") + SEPARATOR


def schedule_overrides_prefix(schedule_id: str) -> str:
    """The prefix of every override sort key of one schedule (by end)."""
    return build_key("schedule_override", schedule_id, kind="sort") + SEPARATOR


def schedule_override_id_sort_key(schedule_id: str, override_id: str) -> str:
    """``schedule_override_id#<id>#<override id>``: an override found by its id (where its
    end is), for a delete."""
    return build_key("schedule_override_id", schedule_id, override_id, kind="sort")


def schedule_override_ids_prefix(schedule_id: str) -> str:
    """The prefix of every override id sort key of one schedule."""
    return build_key("schedule_override_id", schedule_id, kind="sort") + SEPARATOR


def feed_sort_key(subject_id: str) -> str:
    """``feed#<schedule or user id>``: the digest of a calendar feed's secret, in the
    account's teams partition."""
    return build_key("feed", subject_id, kind="sort")


def handoff_key(account: str, schedule_id: str, start: str) -> tuple[str, str]:
    """(PK, SK) of a schedule's handoff event: ``<acct>#<schedule id>`` / ``handoff#<when
    the new shift began>`` (one handoff an instant, so a handoff worked out twice is one
    item)."""
    return build_key(account, schedule_id), build_key("handoff", start, kind="sort")
