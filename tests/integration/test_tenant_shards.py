"""Each account's own shard counts (issue 38): a new account's lists are one Query each, a
stage-wide count change no longer loses point reads, and an account's families grow and
halve online while lists are walked, incidents are read, created, changed and noted, with
the mover stepping in between: every incident once, in order, never a 404, never a lost
change."""

from __future__ import annotations

import dataclasses
import itertools
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynashard import ShardMover, Table
from dynashard.resharding import MOVE_AFTER_SECONDS, counted_keys
from incidents import shards
from incidents.errors import NotFoundError
from incidents.incident.commands import add_note, get_incident, update_incident
from incidents.incident.create import create_incident, new_incident_items, new_summary
from incidents.incident.queries import account_incidents
from incidents.items import details_body
from incidents.keys import ShardConfig
from incidents.models import Participation, Role, Severity, State
from incidents.paging import PageRequest
from incidents.requests import AddNote, CreateIncident, UpdateIncident
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.tenant_shards import OPERATOR, Family, build_tenant_shards
from incidents.timeline.queries import EventRequest, account_events
from local.demo.data import write_batches
from local.engines.clients import local_client
from tests.helpers.clock import ManualClock

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration
SECRET = b"test-cursor-secret-" * 2
accounts = itertools.count()


def legacy_incidents(store: Store, caller: Caller, count: int) -> list[str]:
    """Incidents as a stage wrote them before the maps: at the stage's counts, no map."""
    items, ids = [], []
    for n in range(count):
        summary = new_summary(
            caller, n + 1, CreateIncident(title=f"old {n}"), "2026-11-01T00:00:00Z"
        )
        creator = Participation(
            participant_id=caller.user_id, roles=[Role.CREATOR], incident=summary
        )
        items += new_incident_items(store, caller.account_id, summary, details_body({}), [creator])
        ids.append(summary.id)
    write_batches(store, items)
    for family in Family:  # its first write adopted the maps; a stage before them had none
        key = family.meta_key(caller.account_id).table_key("PK", "SK")
        store.client.delete_item(TableName=store.table_name, Key=key)
    return ids


def found(store: Store, caller: Caller, ids: list[str]) -> int:
    """How many of `ids` a point read finds."""
    hits = 0
    for incident_id in ids:
        try:
            get_incident(store, caller, incident_id)
            hits += 1
        except NotFoundError:
            pass
    return hits


def test_a_stage_count_change_loses_point_reads_only_without_a_map(
    dynamodb: DynamoDBClient, table_name: str
) -> None:
    """Before the maps, ``summaryShards`` was the address: a stage that changes it from 16
    to 32 no longer finds about half of its incidents by id. An account with a map (every
    account created since, or adopted) keeps its own count whatever the stage says."""
    before = build_store(dynamodb, table_name, SECRET)
    after = build_store(dynamodb, table_name, SECRET, config=ShardConfig(summary_shards=32))
    legacy = Caller(new_id("acct"), new_id("user"))
    old = legacy_incidents(before, legacy, 40)
    assert found(before, legacy, old) == 40
    lost = 40 - found(after, legacy, old)
    assert 10 <= lost <= 30, f"{lost} of 40 lost: the trap the maps remove"

    mapped = Caller(new_id("acct"), new_id("user"))
    made = [
        create_incident(before, mapped, CreateIncident(title=f"new {n}")).summary.id
        for n in range(40)
    ]
    assert found(after, mapped, made) == 40, "the account's map, not the stage, places them"
    build_store(dynamodb, table_name, SECRET).shards.ensure_maps(
        legacy.account_id, config=before.config
    )
    adopted = build_store(dynamodb, table_name, SECRET, config=ShardConfig(summary_shards=32))
    assert found(adopted, legacy, old) == 40, "adopted at the old count: found again"


def test_an_account_from_before_the_maps_adopts_them_at_its_first_write(
    dynamodb: DynamoDBClient, table_name: str
) -> None:
    """No migration step: the first change of an account without maps writes them at the
    stage's counts (where its items are), and lists it as a candidate for the cold check."""
    legacy = Caller(new_id("acct"), new_id("user"))
    old = legacy_incidents(build_store(dynamodb, table_name, SECRET), legacy, 10)
    store = build_store(dynamodb, table_name, SECRET)
    assert not store.shards.meta(legacy.account_id, Family.SUMMARIES).stored
    update_incident(store, legacy, old[0], UpdateIncident(severity=Severity.SEV1))
    maps = {family: store.shards.meta(legacy.account_id, family) for family in Family}
    assert maps[Family.SUMMARIES].stored
    assert maps[Family.SUMMARIES].shard_count == 16, "the stage's count, where its items are"
    assert maps[Family.EVENTS].shard_count == 16
    counted = counted_keys(Table(dynamodb, table_name, TABLE_SCHEMA))
    assert Family.SUMMARIES.meta_key(legacy.account_id) in counted
    bigger = build_store(dynamodb, table_name, SECRET, config=ShardConfig(summary_shards=32))
    assert found(bigger, legacy, old) == 10, "its map, not the stage, places them now"


def test_a_new_account_reads_each_list_in_one_query(store: Store) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    for n in range(10):
        create_incident(store, caller, CreateIncident(title=f"incident {n}"))
    assert {
        family: store.shards.meta(caller.account_id, family).shard_count for family in Family
    } == dict.fromkeys(Family, 1)
    for state in State:
        page = account_incidents(store, caller, state, PageRequest(limit=25))
        assert page.stats is not None
        assert page.stats.streams == 1
    events = account_events(store, caller, EventRequest(PageRequest(limit=25)))
    assert len(events.items) == 10
    assert events.stats is not None
    assert events.stats.streams == 1


@dataclasses.dataclass(frozen=True)
class Live:
    """Two stores on one fresh table and one clock: `store`, whose maps are never cached
    (the test's operator and writers see each change at once), and `lagging`, a reader
    that caches each map as a deployed server does."""

    store: Store
    lagging: Store
    clock: ManualClock


@pytest.fixture(
    scope="module", params=["dynamodb-local", pytest.param("moto", marks=pytest.mark.fuzz)]
)
def live(
    request: pytest.FixtureRequest, dynamodb_endpoint: str, moto_endpoint: str
) -> Callable[[], AbstractContextManager[Live]]:
    """`Live` stores on DynamoDB Local and, in `make fuzz`, on moto (the two engines must
    agree), each on a fresh table (moto's Query reads its whole table: one growing across
    examples slows each one)."""
    from local.engines.clients import create_table  # noqa: PLC0415

    endpoint = dynamodb_endpoint if request.param == "dynamodb-local" else moto_endpoint
    client = local_client(endpoint, max_pool_connections=32)

    @contextmanager
    def fresh() -> Iterator[Live]:
        name = f"tenant-shards-{uuid.uuid4().hex[:12]}"
        create_table(client, TABLE_SCHEMA, name)
        clock = ManualClock()
        built = build_store(client, name, SECRET, shard_clock=clock)
        built = dataclasses.replace(
            built,
            shards=build_tenant_shards(built.table, built.config, policy=OPERATOR, clock=clock),
        )
        lagging = build_store(client, name, SECRET, shard_clock=clock)
        try:
            yield Live(built, lagging, clock)
        finally:
            built.engine.close()
            lagging.engine.close()
            client.delete_table(TableName=name)

    return fresh


class Account:
    """One account's incidents as the test made them, and the checks on them."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.caller = Caller(new_id("acct"), new_id("user"))
        self.versions: dict[str, tuple[int, int]] = {}  # id -> (version, notes)
        self.created = itertools.count()

    def create(self) -> None:
        made = create_incident(
            self.store, self.caller, CreateIncident(title=f"i{next(self.created)}")
        )
        self.versions[made.summary.id] = (1, 0)

    def update(self, incident_id: str) -> None:
        version, notes = self.versions[incident_id]
        severity = Severity.SEV1 if version % 2 else Severity.SEV2
        update_incident(self.store, self.caller, incident_id, UpdateIncident(severity=severity))
        self.versions[incident_id] = (version + 1, notes)

    def note(self, incident_id: str) -> None:
        version, notes = self.versions[incident_id]
        add_note(self.store, self.caller, incident_id, AddNote(text="a note"))
        self.versions[incident_id] = (version, notes + 1)

    def check_point_reads(self) -> None:
        for incident_id, (version, _) in self.versions.items():
            incident = get_incident(self.store, self.caller, incident_id)  # never a 404
            assert incident.summary.version == version, "no change lost, no stale copy read"

    def grow(self, family: Family, times: int) -> None:
        counts, key = self.store.shards.counts(family), family.meta_key(self.caller.account_id)
        for _ in range(times):
            counts.grow(key, counts.refresh(key))

    def shrink(self, family: Family) -> None:
        self.store.shards.counts(family).shrink(
            family.meta_key(self.caller.account_id), family.move_spec()
        )

    def mover(self, family: Family, clock: ManualClock) -> ShardMover:
        spec, store = family.move_spec(), self.store
        return ShardMover(
            store.shards.counts(family), Table(store.client, store.table_name, TABLE_SCHEMA),
            spec.version_attribute, page_size=1, index=spec.index, hashed=spec.hashed,
            clock=clock,
        )  # fmt: skip

    def step_movers(self, movers: list[ShardMover]) -> None:
        for mover, family in zip(movers, Family, strict=True):
            mover.step(family.meta_key(self.caller.account_id))

    def events(self) -> int:
        """How many events the account's incidents have: created, changed, noted."""
        return sum(version + notes for version, notes in self.versions.values())

    def pick(self, picks: Any) -> str:
        return str(picks.choice(sorted(self.versions)))


class Walk:
    """A cursor walk over a list, a page at a time, oldest first, and what the list held
    when the walk ended (what was written after its last page is not in it)."""

    def __init__(self, page: Callable[[str | None], Any], held: Callable[[], object]) -> None:
        self._page, self._held = page, held
        self.seen: list[str] = []
        self.cursor: str | None = None
        self.more = True
        self.held_at_end: object = None

    def step(self) -> None:
        if self.more:
            page = self._page(self.cursor)
            self.seen += [item.id for item in page.items]
            self.cursor, self.more = page.next_cursor, page.has_more
            if not self.more:
                self.held_at_end = self._held()

    @staticmethod
    def step_all(*walks: Walk) -> None:
        for walk in walks:
            walk.step()

    def finish(self) -> list[str]:
        while self.more:
            self.step()
        return self.seen


OPERATIONS = st.lists(
    st.sampled_from(["step", "create", "update", "note", "page", "lagged", "read", "tick", "tick"]),
    min_size=5,
    max_size=25,
)
TICK_SECONDS = 30.0
"""What a tick moves the clock by: two let the movers start (`MOVE_AFTER_SECONDS`)."""


@pytest.mark.slow
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=OPERATIONS, picks=st.randoms(use_true_random=False))
def test_families_halved_while_walked_written_and_read(
    live: Callable[[], AbstractContextManager[Live]], operations: list[str], picks: Any
) -> None:
    with live() as stores:
        halve_while_walked(stores, operations, picks)


def list_walks(store: Store, account: Account) -> tuple[Walk, Walk]:
    """The account's open list and its events, walked oldest first by `store`."""
    who = account.caller
    opened = Walk(
        lambda c: account_incidents(
            store, who, State.OPEN, PageRequest(limit=3, cursor=c, descending=False)
        ),
        lambda: set(account.versions),
    )
    events = Walk(
        lambda c: account_events(
            store, who, EventRequest(PageRequest(limit=4, cursor=c, descending=False))
        ),
        account.events,
    )
    return opened, events


def halve_while_walked(stores: Live, operations: list[str], picks: Any) -> None:
    """Every family of a new account grown to 8 and halved to 4 while `operations` run,
    the lists walked by a reader that sees each change at once and by one whose cached
    maps lag it by up to their cache's life."""
    live, clock = stores.store, stores.clock
    account = Account(live)
    account.create()  # a new account: its maps at 1
    for family in Family:
        account.grow(family, 3)  # 1 -> 8: as a busy account grows
    for _ in range(11):
        account.create()
    who = account.caller
    clock.advance(MOVE_AFTER_SECONDS)  # the growth is long past
    opened, events = list_walks(live, account)
    lagged = list_walks(stores.lagging, account)
    Walk.step_all(opened, events, *lagged)  # cursors made (and maps cached) before the halving
    for family in Family:
        account.shrink(family)
    movers = [account.mover(family, clock) for family in Family]
    act: dict[str, Callable[[], None]] = {
        "step": lambda: account.step_movers(movers),
        "create": account.create,
        "update": lambda: account.update(account.pick(picks)),
        "note": lambda: account.note(account.pick(picks)),
        "page": lambda: Walk.step_all(opened, events),
        "lagged": lambda: Walk.step_all(*lagged),
        "read": lambda: None,  # point reads follow every operation
        "tick": lambda: clock.advance(TICK_SECONDS),
    }
    for operation in operations:
        act[operation]()
        account.check_point_reads()
    for mover, family in zip(movers, Family, strict=True):
        while not mover.step(family.meta_key(who.account_id)).settled:
            clock.advance(TICK_SECONDS)
        meta = live.shards.meta(who.account_id, family)
        assert (meta.shard_count, meta.read_count, meta.moving_from) == (4, 4, None), family
    account.check_point_reads()
    for walk_open, walk_events in ((opened, events), lagged):
        walked = walk_open.finish()
        assert len(walked) == len(set(walked)), "no incident twice"
        assert set(walked) == walk_open.held_at_end, "every open incident, the new ones too"
        listed = walk_events.finish()
        assert len(listed) == len(set(listed)), "no event twice"
        assert len(listed) == walk_events.held_at_end, "every event, the new ones too"
    after = account_incidents(live, who, State.OPEN, PageRequest(limit=100))
    assert after.stats is not None
    assert after.stats.streams == 4, "reads back to 4 shards"


def test_the_shards_command_shows_grows_halves_and_adopts(
    store: Store, dynamodb_endpoint: str, capsys: Any
) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    made = {
        create_incident(store, caller, CreateIncident(title=f"i{n}")).summary.id for n in range(10)
    }
    where = ["--table", store.table_name, "--endpoint", dynamodb_endpoint, "--region", "us-east-1"]

    def run(*command: str, account: str = caller.account_id) -> list[dict[str, Any]]:
        assert shards.main([*command, *where, "--account", account]) == 0
        return [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    assert {line["family"]: line["count"] for line in run("show")} == dict.fromkeys(Family, 1)
    run("grow", "--family", "open")
    assert [line["count"] for line in run("grow", "--family", "open")] == [4]
    lines = run(
        "shrink", "--family", "open", "--pause", "0", "--move-after", "0", "--page-size", "2"
    )
    assert (lines[0]["count"], lines[0]["moving_from"]) == (2, 4)
    assert (lines[-1]["count"], lines[-1]["read_count"], lines[-1]["moving_from"]) == (2, 2, None)
    assert run("status") == [], "no move left"
    fresh = build_store(store.client, store.table_name, SECRET)  # no cached map
    listed = account_incidents(fresh, caller, State.OPEN, PageRequest(limit=25))
    fresh.engine.close()
    assert {summary.id for summary in listed.items} == made
    assert listed.stats is not None
    assert listed.stats.streams == 2

    legacy = Caller(new_id("acct"), new_id("user"))
    old = legacy_incidents(store, legacy, 5)
    adopted = run("adopt", account=legacy.account_id)
    assert {line["family"]: line["count"] for line in adopted} == {
        Family.SUMMARIES: 16,
        Family.OPEN: 8,
        Family.CLOSED: 32,
        Family.EVENTS: 16,
    }
    assert found(store, legacy, old) == 5
