"""Each account's own shard counts for its summaries, state lists and events.

The stage's counts (``summaryShards``, ``stateShards``, 16 for events) are the default and
the maximum: an account without a map item reads and writes at them, so a stage that
predates the maps keeps working and adopts them with no migration step (its counts are
every existing account's first epoch). An account's first create writes its maps at
`NEW_TENANT_COUNT` before its transaction, so a small account's lists are one Query each.
Counts then change per account, online, through `dynashard`: doubling on throttling or by
command, halving by command with the mover (`dynashard.resharding.mover`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from dynashard import GrowthPolicy, ShardCounts, ShardMetaKey, Table
from dynashard.resharding import GrowthHook, MoveSpec, ShardedKey, ShardMeta, log_growth
from incidents.keys import ShardConfig, events_base, state_base, summary_base
from incidents.models import State
from incidents.table import GSI2

NEW_TENANT_COUNT = 1
"""Shards of each family of a new account: one Query per list until it grows."""


class Family(StrEnum):
    """An account's key families with a count of their own."""

    SUMMARIES = "summaries"
    OPEN = "open"
    CLOSED = "closed"
    EVENTS = "events"

    @classmethod
    def of_state(cls, state: State) -> Family:
        """The family of the account's list of incidents in `state`."""
        return cls(state.value.lower())

    def base(self, account: str) -> str:
        """The base key the family's shards are suffixed to."""
        if self is Family.SUMMARIES:
            return summary_base(account)
        if self is Family.EVENTS:
            return events_base(account)
        return state_base(account, State(self.value.upper()))

    def meta_key(self, account: str) -> ShardMetaKey:
        """Where `account`'s map of this family lives (its metadata partition)."""
        return ShardMetaKey.for_tenant(account, self.base(account))

    def move_spec(self) -> MoveSpec:
        """How the mover moves the family's items: summaries by copy (conditioned on
        their event counter, which every change moves, unlike their version), lists and
        events by re-pointing GSI2 (their shard is the hash of their ``id``)."""
        if self is Family.SUMMARIES:
            return MoveSpec(version_attribute="event_seq")
        return MoveSpec(index=GSI2, hashed="id")

    def stage_count(self, config: ShardConfig) -> int:
        """The stage's count: a map-less account's, and every account's maximum."""
        if self is Family.SUMMARIES:
            return config.summary_shards
        if self is Family.EVENTS:
            return config.event_shards
        return config.state_shards.count_for(self.value.upper())


@dataclass
class TenantShards:
    """The families' counts of every account, read through `dynashard.ShardCounts` (one
    per family, whose policy has the stage's count as default and maximum)."""

    families: Mapping[Family, ShardCounts]

    def meta(self, account: str, family: Family) -> ShardMeta:
        """The account's map of `family`, cached for a few seconds (what readers cover)."""
        return self.families[family].get(family.meta_key(account))

    def write_count(self, account: str, family: Family) -> int:
        """Shards a new item of `family` goes to. A cached "no map" is read again (one
        consistent read), so a writer never writes at the stage's count into an account
        whose first create has just written its maps; an account that still has none is
        one from before the maps (it has an incident, or nothing would be written), and
        its first write adopts the stage's count as its map, once."""
        key = family.meta_key(account)
        meta = self.families[family].get_for_write(key)
        if not meta.stored:
            self.adopt(account)
            meta = self.families[family].get_for_write(key)
        return meta.shard_count

    def adopt(self, account: str) -> None:
        """Give each family of `account` without a map one at the stage's count (where an
        account from before the maps has its items), listed for the cold check."""
        self._ensure(account, lambda family: self.families[family].policy.default_count)

    def counts(self, family: Family) -> ShardCounts:
        """The `dynashard.ShardCounts` of `family` (to grow, shrink, find an item)."""
        return self.families[family]

    def sharded(self, account: str, *families: Family) -> tuple[ShardedKey, ...]:
        """The account's `families` as keys a throttled transaction grows (up to the
        stage's count, within the growth cooldown)."""
        return tuple(
            ShardedKey(self.families[family], family.meta_key(account)) for family in families
        )

    def ensure_maps(self, account: str, *, config: ShardConfig | None = None) -> None:
        """Give each family of `account` without a map one: at `NEW_TENANT_COUNT`, or at
        `config`'s counts (a seeder that wants a big tenant's layout). For what writes an
        account's incidents outside its first create (seeding demos, benches and tests):
        call it before the first item, as that create would."""
        self._ensure(
            account, lambda family: family.stage_count(config) if config else NEW_TENANT_COUNT
        )

    def _ensure(self, account: str, count_of: Callable[[Family], int]) -> None:
        for family, counts in self.families.items():
            key = family.meta_key(account)
            if not counts.get_for_write(key).stored:
                counts.put_first(ShardMeta.initial(key, count_of(family)).stored_now())


def build_tenant_shards(
    table: Table,
    config: ShardConfig,
    *,
    on_growth: GrowthHook = log_growth,
    policy: GrowthPolicy | None = None,
    clock: Callable[[], float] = time.time,
) -> TenantShards:
    """One `ShardCounts` per family, each with `policy` (its cooldown, jitter and cache;
    an operator's has none) and the stage's count as default and maximum; `clock` is what
    their caches read the time from (tests simulate it)."""
    template = policy or GrowthPolicy()
    return TenantShards(
        {
            family: ShardCounts(
                table,
                policy=replace(
                    template,
                    default_count=family.stage_count(config),
                    max_count=family.stage_count(config),
                ),
                on_growth=on_growth,
                clock=clock,
            )
            for family in Family
        }
    )


OPERATOR = GrowthPolicy(cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0)
"""An operator's commands act at once and read every map afresh."""
