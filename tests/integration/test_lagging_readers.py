"""Readers whose cached shard maps lag a halving, on DynamoDB Local with a simulated clock.

A server caches each map for `GrowthPolicy.cache_seconds`. One that read a family's map
just before a halving believes nothing moves until its cache lapses, and would trust a
cursor's per-stream positions while the mover puts items behind them. Here one store
(the reader) walks a list a page at a time, another (the operator) halves the family
between two pages and steps its mover as early as it will move anything, and the reader
goes on at once: every item is listed once, for each family that can halve, and every
incident is point-read from the reader through the move.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from dynashard import GrowthPolicy, IndexSchema, ShardCounts, ShardMetaKey, ShardMover, Table
from dynashard.keys.keys import shard_keys
from dynashard.resharding import MoveSpec
from incidents.incident.commands import get_incident, update_incident
from incidents.incident.create import create_incident
from incidents.incident.queries import account_incidents, my_incidents
from incidents.keys import participant_meta
from incidents.models import Severity, State, Status
from incidents.paging import PageRequest
from incidents.requests import CreateIncident, UpdateIncident
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.tenant_shards import OPERATOR, Family, build_tenant_shards
from incidents.timeline.queries import EventRequest, account_events
from tests.helpers.clock import ManualClock

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration
SECRET = b"test-cursor-secret-" * 2
INCIDENTS = 12
PAGE = 5
ACCOUNTS = 3
"""Accounts halved a test: where their items hash decides whether a lagging reader would
miss one, so each family is tried three times."""
STEPS, STEP_SECONDS = 20, 10.0
GSI1 = IndexSchema("GSI1", "GSI1PK", "GSI1SK")
GSI2 = IndexSchema("GSI2", "GSI2PK", "GSI2SK")
PARTICIPANT_OPERATOR = GrowthPolicy(cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0)


@dataclass
class World:
    """Two stores on one table and one clock: a writer, and a reader whose caches lag."""

    clock: ManualClock
    writer: Store
    reader: Store
    caller: Caller

    def incidents(self) -> list[str]:
        made = [
            create_incident(self.writer, self.caller, CreateIncident(title=f"i{n}"))
            for n in range(INCIDENTS)
        ]
        return [incident.summary.id for incident in made]


@pytest.fixture
def world(dynamodb: DynamoDBClient, table_name: str) -> Iterator[World]:
    clock = ManualClock()
    writer, reader = (
        build_store(dynamodb, table_name, SECRET, shard_clock=clock) for _ in range(2)
    )
    yield World(clock, writer, reader, Caller(new_id("acct"), new_id("user")))
    writer.engine.close()
    reader.engine.close()


@dataclass(frozen=True)
class Subject:
    """A family that can halve: its map, how its items move, and the list over it."""

    name: str
    counts: Callable[[World], ShardCounts]
    """The operator's: grows and halves."""
    writers: Callable[[World], ShardCounts]
    """The writer store's (cached as a server's)."""
    key: Callable[[World], ShardMetaKey]
    spec: MoveSpec
    closed: bool = False
    walk: Callable[[World, str | None], Any] | None = None
    """One page of the list over the family, read by the reader (None: point reads only)."""


def _tenant(family: Family) -> dict[str, Any]:
    return {
        "counts": lambda w: build_tenant_shards(
            w.writer.table, w.writer.config, policy=OPERATOR, clock=w.clock
        ).counts(family),
        "writers": lambda w: w.writer.shards.counts(family),
        "key": lambda w: family.meta_key(w.caller.account_id),
        "spec": family.move_spec(),
    }


def _state_page(state: State) -> Callable[[World, str | None], Any]:
    return lambda w, c: account_incidents(
        w.reader, w.caller, state, PageRequest(limit=PAGE, cursor=c)
    )


SUBJECTS = [
    Subject("open", **_tenant(Family.OPEN), walk=_state_page(State.OPEN)),
    Subject("closed", **_tenant(Family.CLOSED), closed=True, walk=_state_page(State.CLOSED)),
    Subject(
        "events",
        **_tenant(Family.EVENTS),
        walk=lambda w, c: account_events(
            w.reader, w.caller, EventRequest(PageRequest(limit=PAGE, cursor=c))
        ),
    ),
    Subject("summaries", **_tenant(Family.SUMMARIES)),
    Subject(
        "participant",
        counts=lambda w: ShardCounts(
            Table(w.writer.client, w.writer.table_name, TABLE_SCHEMA),
            policy=PARTICIPANT_OPERATOR,
            clock=w.clock,
        ),
        writers=lambda w: w.writer.counts,
        key=lambda w: participant_meta(w.caller.account_id, w.caller.user_id),
        spec=MoveSpec(index=GSI1, hashed="incident_id"),
        walk=lambda w, c: my_incidents(
            w.reader, w.caller, State.OPEN, PageRequest(limit=PAGE, cursor=c)
        ),
    ),
]


def upper_half(world: World, subject: Subject, key: ShardMetaKey) -> int:
    """Items still in shards 2 and 3 of 4 (strongly consistent on the table, eventually on
    an index, as the mover reads them)."""
    index = subject.spec.index
    attribute = TABLE_SCHEMA.partition_key if index is None else index.partition_key
    held = 0
    for partition in shard_keys(key.base, 4)[2:]:
        where: dict[str, Any] = (
            {"ConsistentRead": True} if index is None else {"IndexName": index.name}
        )
        held += world.writer.client.query(
            TableName=world.writer.table_name,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": attribute},
            ExpressionAttributeValues={":pk": {"S": partition}},
            Select="COUNT",
            **where,
        )["Count"]
    return held


def walk(world: World, subject: Subject, cursor: str | None, *, first: bool = False) -> list[str]:
    """The list's items from `cursor` on (from its start with `first`), a page at a time."""
    assert subject.walk is not None
    seen: list[str] = []
    while first or cursor is not None:
        page = subject.walk(world, cursor)
        seen += [item.id for item in page.items]
        cursor, first = (page.next_cursor if page.has_more else None), False
    return seen


@pytest.mark.parametrize("subject", SUBJECTS, ids=lambda s: s.name)
def test_a_reader_whose_map_lags_a_halving_misses_nothing(world: World, subject: Subject) -> None:
    for _ in range(ACCOUNTS):
        world.caller = Caller(new_id("acct"), new_id("user"))
        walked, truth = halve_between_pages(world, subject)
        assert len(walked) == len(set(walked)), "no item twice"
        missing = set(truth) - set(walked)
        assert not missing, f"{len(missing)} of {len(truth)} items missing"


def halve_between_pages(world: World, subject: Subject) -> tuple[list[str], list[str]]:
    """The caller's family grown to 4 shards long before; the reader reads a page, the
    operator halves to 2, a writer changes every incident and the operator steps the mover
    until the upper half is empty; the reader reads on. What the reader walked, and what
    the list held before its first page (all of which the walk must list)."""
    world.incidents()  # the account's maps, at 1
    counts, key = subject.counts(world), subject.key(world)
    for _ in range(2):  # 1 -> 4
        counts.grow(key, counts.refresh(key))
    world.clock.advance(600)  # the writer's cached map of 1 shard lapses
    ids = world.incidents()
    if subject.closed:
        for incident_id in ids:
            update_incident(
                world.writer, world.caller, incident_id, UpdateIncident(status=Status.RESOLVED)
            )
    walked: list[str] = []
    cursor, held = None, []
    if subject.walk is not None:
        held = walk(world, subject, None, first=True)  # what the walk must list
        first = subject.walk(world, None)  # the reader caches the map: 4 shards, none moving
        walked, cursor = [item.id for item in first.items], first.next_cursor
        assert first.has_more
    world.clock.advance(1)
    counts.shrink(key, subject.spec)
    assert upper_half(world, subject, key) > 0
    subject.writers(world).refresh(key)  # a writer whose cache lapsed just now
    for incident_id in ids:  # changed where they are, by a writer that knows of the halving
        severity = UpdateIncident(severity=Severity.SEV1)
        update_incident(world.writer, world.caller, incident_id, severity)
    mover = ShardMover(
        counts, Table(world.writer.client, world.writer.table_name, TABLE_SCHEMA),
        subject.spec.version_attribute, index=subject.spec.index, hashed=subject.spec.hashed,
        clock=world.clock,
    )  # fmt: skip
    for _ in range(STEPS):  # as early as the mover moves anything
        mover.step(key)
        if upper_half(world, subject, key) == 0:
            break
        world.clock.advance(STEP_SECONDS)
    else:
        pytest.fail(f"the mover moved nothing in {STEPS * STEP_SECONDS} s")
    for incident_id in ids:  # the reader's point reads find every incident
        assert get_incident(world.reader, world.caller, incident_id).summary.id == incident_id
    if subject.walk is None:
        return [], []
    walked += walk(world, subject, cursor)
    while not mover.step(key).settled:
        world.clock.advance(STEP_SECONDS)
    return walked, held
