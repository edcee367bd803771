"""Property tests of the fan-out engine on both local engines, DynamoDB Local and moto, and
of its asyncio twin (`dynashard.aio`) on DynamoDB Local.

For random data over 1-64 streams, page sizes 1-100, both directions, duplicated
identities and sort-key ranges, the concatenated pages must equal the expected list.
The engines differ where it matters to the merge (``LastEvaluatedKey`` at ``Limit``, the
1 MB cut, validation), so every property runs on each.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pytest
from aiobotocore.session import get_session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    Page,
    PartitionStream,
    SortKeyRange,
    Strategy,
)
from dynashard.aio import AsyncFanOutEngine, client_config
from dynashard.query import Item, PageBudget
from dynashard.testing.dynamodb_local import REGION, local_client
from dynashard.testing.fanout_data import (
    SECRET,
    Entity,
    expected_order,
    identity_of,
    make_streams,
    new_prefix,
    write_entities,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = [pytest.mark.integration, pytest.mark.slow]
T = TypeVar("T")
REQUEST_BUDGET = 300
"""Requests one example may make: the server answers ~100/s, so pages*streams is capped."""
PROPERTY_SETTINGS = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,  # CI sees the same examples every run
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
STATES = ("OPEN", "CLOSED", "OPENED")  # "OPEN" is a prefix of "OPENED": begins_with must not mix


RANGES = st.sampled_from(
    [
        SortKeyRange(),
        SortKeyRange.begins_with("OPEN#"),
        SortKeyRange.begins_with("CLOSED#"),
        SortKeyRange.between("CLOSED#0200000", "OPEN#0500000"),
        SortKeyRange.greater_than("OPEN"),
        SortKeyRange.less_than("OPEN#0300000", inclusive=True),
    ]
)


@dataclass(frozen=True)
class Scenario:
    """Streams, entities with unique sort keys (some copied into several streams), a range."""

    streams: int
    entities: list[Entity]
    sort_range: SortKeyRange
    descending: bool

    def copies_in_range(self) -> Counter[str]:
        """Every stored copy of every entity inside the range, by identity."""
        return Counter(
            e.identity
            for e in self.entities
            if self.sort_range.contains(e.sort_key)
            for _ in e.streams
        )


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """Random data over 1-64 streams, with shared prefixes, duplicates and a sort-key range."""
    streams = draw(st.integers(1, 64))
    count = draw(st.integers(0, 80))
    numbers = draw(st.lists(st.integers(0, 10**6), min_size=count, max_size=count, unique=True))
    entities = []
    for n, number in enumerate(numbers):
        state = draw(st.sampled_from(STATES))
        homes = draw(st.lists(st.integers(0, streams - 1), min_size=1, max_size=3, unique=True))
        entities.append(Entity(f"id{n}", f"{state}#{number:07d}#id{n}", tuple(homes)))
    return Scenario(streams, entities, draw(RANGES), draw(st.booleans()))


DYNAMODB_LOCAL, MOTO = "dynamodb-local", "moto"
THREADS, ASYNCIO = "threads", "asyncio"
SETUPS = [(DYNAMODB_LOCAL, THREADS), (DYNAMODB_LOCAL, ASYNCIO), (MOTO, THREADS)]


class Pager(Protocol):
    """What the properties read through: `FanOutEngine` or the async engine behind it."""

    def page(self, query: FanOutQuery) -> Page: ...

    def read_all(
        self, streams: Sequence[PartitionStream], page_size: int = 1000
    ) -> Iterator[Item]: ...


@pytest.fixture(scope="module", params=SETUPS, ids="-".join)
def setup(request: pytest.FixtureRequest) -> tuple[str, str]:
    """DynamoDB Local read by both engines (threads and asyncio), then moto by threads."""
    backend, driver = request.param
    endpoint = request.getfixturevalue(
        "dynamodb_endpoint" if backend == DYNAMODB_LOCAL else "moto_endpoint"
    )
    return endpoint, driver


@pytest.fixture(scope="module")
def dynamodb(setup: tuple[str, str]) -> DynamoDBClient:
    return local_client(setup[0], max_pool_connections=32)


@pytest.fixture(scope="module")
def fanout(setup: tuple[str, str], dynamodb: DynamoDBClient) -> Iterator[Pager]:
    endpoint, driver = setup
    if driver == ASYNCIO:
        twin = BlockingAsyncEngine(endpoint, CursorCodec(SECRET), max_concurrency=16)
        yield twin
        twin.close()
    else:
        with FanOutEngine(dynamodb, CursorCodec(SECRET), max_workers=16) as threads:
            yield threads


class BlockingAsyncEngine:
    """`dynashard.aio.AsyncFanOutEngine` behind `FanOutEngine`'s blocking ``page``, so the
    properties run unchanged on both engines: an event loop on a thread of its own, with an
    aiobotocore client entered on it."""

    def __init__(self, endpoint: str, codec: CursorCodec, max_concurrency: int = 16) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stack = AsyncExitStack()
        self._engine = self._run(self._open(endpoint, codec, max_concurrency))

    async def _open(
        self, endpoint: str, codec: CursorCodec, max_concurrency: int
    ) -> AsyncFanOutEngine:
        client = await self._stack.enter_async_context(
            get_session().create_client(
                "dynamodb",
                endpoint_url=endpoint,
                region_name=REGION,
                config=client_config(max_concurrency),
                aws_access_key_id="local",
                aws_secret_access_key="local",
            )
        )
        return AsyncFanOutEngine(client, codec, max_concurrency=max_concurrency)

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def page(self, query: FanOutQuery) -> Page:
        """One page of `query`, read by the async engine."""
        return self._run(self._engine.page(query))

    def read_all(self, streams: Sequence[PartitionStream], page_size: int = 1000) -> Iterator[Item]:
        """Every item of every stream, read by the async engine (collected, then handed out)."""

        async def collect() -> list[Item]:
            return [item async for item in self._engine.read_all(streams, page_size)]

        return iter(self._run(collect()))

    def close(self) -> None:
        """Close the client, then stop the loop and its thread."""
        self._run(self._stack.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


def stored_query(
    dynamodb: DynamoDBClient, new_table: Callable[[], str], scenario: Scenario, **options: Any
) -> FanOutQuery:
    """Write the scenario's entities to a fresh table and return a query over their streams."""
    prefix, table_name = new_prefix(), new_table()
    write_entities(dynamodb, table_name, prefix, scenario.entities)
    streams = make_streams(table_name, prefix, scenario.streams, scenario.sort_range)
    return FanOutQuery(streams=streams, binding="test", descending=scenario.descending, **options)


def page_sizes(data: st.DataObject, scenario: Scenario) -> Iterator[int]:
    """Random page sizes 1-100, the smallest allowed only where the request budget permits."""
    requests = len(scenario.entities) * scenario.streams
    smallest = min(100, max(1, -(-requests // REQUEST_BUDGET)))
    return iter(lambda: data.draw(st.integers(smallest, 100)), None)


def all_pages(engine: Pager, query: FanOutQuery, sizes: Iterator[int]) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        limit = next(sizes)
        page = engine.page(replace(query, limit=limit, cursor=cursor))
        if query.strategy is Strategy.ROUND_ROBIN:
            # Each visit to a stream returns an item or finishes it: none makes no progress.
            assert page.stats.round_trips <= len(page.items) + len(query.streams)
        pages.append([identity_of(item) for item in page.items])
        assert page.has_more == (page.next_cursor is not None)
        assert len(page.items) == limit or not page.has_more, "a partial page ends the list"
        if not page.has_more:
            return pages
        cursor = page.next_cursor
        assert len(pages) < 1000, "paging did not terminate"


@PROPERTY_SETTINGS
@given(scenario=scenarios(), sizes=st.data())
def test_ordered_pages_concatenate_to_the_exact_deduplicated_list(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    fanout: Pager,
    scenario: Scenario,
    sizes: st.DataObject,
) -> None:
    query = stored_query(dynamodb, new_table, scenario, identity=identity_of)
    pages = all_pages(fanout, query, page_sizes(sizes, scenario))
    expected = expected_order(scenario.entities, scenario.sort_range, scenario.descending)
    assert [i for page in pages for i in page] == expected


@st.composite
def text_scenarios(draw: st.DrawFn) -> Scenario:
    """Sort keys of any text (any code point DynamoDB stores), over 2-8 streams: the bounds
    the merge computes between them (spans, plan separators) must be keys DynamoDB takes."""
    streams = draw(st.integers(2, 8))
    keys = draw(
        st.lists(
            st.text(
                st.characters(exclude_categories=["Cs"], exclude_characters="\0"),
                min_size=1,
                max_size=12,
            ),
            max_size=60,
            unique=True,
        )
    )
    entities = [
        Entity(f"id{n}", key, (draw(st.integers(0, streams - 1)),)) for n, key in enumerate(keys)
    ]
    return Scenario(streams, entities, SortKeyRange(), draw(st.booleans()))


@PROPERTY_SETTINGS
@given(scenario=text_scenarios(), size=st.integers(2, 12))
def test_ordered_pages_over_keys_of_any_text(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    fanout: Pager,
    scenario: Scenario,
    size: int,
) -> None:
    pages, expected = ordered_walk(dynamodb, new_table, fanout, scenario, size)
    assert [i for page in pages for i in page] == expected


def ordered_walk(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    fanout: Pager,
    scenario: Scenario,
    size: int,
) -> tuple[list[list[str]], list[str]]:
    """The scenario stored and walked with pages of `size`; the pages and the exact list."""
    query = stored_query(dynamodb, new_table, scenario, identity=identity_of)
    pages = all_pages(fanout, query, iter(lambda: size, None))
    return pages, expected_order(scenario.entities, scenario.sort_range, scenario.descending)


@PROPERTY_SETTINGS
@given(scenario=scenarios())
def test_parallel_reads_every_copy_exactly_once(
    dynamodb: DynamoDBClient, new_table: Callable[[], str], fanout: Pager, scenario: Scenario
) -> None:
    streams = stored_query(dynamodb, new_table, scenario).streams
    found = Counter(identity_of(item) for item in fanout.read_all(streams, page_size=7))
    assert found == scenario.copies_in_range()


@PROPERTY_SETTINGS
@given(scenario=scenarios(), sizes=st.data())
def test_round_robin_returns_every_copy_exactly_once(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    fanout: Pager,
    scenario: Scenario,
    sizes: st.DataObject,
) -> None:
    query = stored_query(dynamodb, new_table, scenario, strategy=Strategy.ROUND_ROBIN)
    size = next(page_sizes(sizes, scenario))
    pages = all_pages(fanout, query, iter(lambda: size, None))
    assert all(len(page) <= size for page in pages)
    assert Counter(i for page in pages for i in page) == scenario.copies_in_range()


class RequestClock:
    """A clock that moves one tick a Query request: a budget of N ticks is N requests, as
    if each took the same time (a slow engine, deterministically)."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.ticks = 0
        self._client = client
        client.meta.events.register("before-call.dynamodb.Query", self._tick)

    def _tick(self, **_: Any) -> None:
        self.ticks += 1

    def __call__(self) -> float:
        return float(self.ticks)

    def close(self) -> None:
        self._client.meta.events.unregister("before-call.dynamodb.Query", self._tick)


@PROPERTY_SETTINGS
@given(scenario=scenarios(), size=st.integers(1, 30), ticks=st.integers(1, 6))
def test_pages_cut_short_by_their_budget_resume_exactly(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    fanout: Pager,
    scenario: Scenario,
    size: int,
    ticks: int,
) -> None:
    """With a time budget of a few requests, pages end early (short, even empty, with
    has_more and a cursor), and the walk is still the exact list: no gap, repeat or
    misorder, and it ends."""
    query = stored_query(dynamodb, new_table, scenario, identity=identity_of)
    clock = RequestClock(dynamodb)
    pages: list[list[str]] = []
    try:
        cursor = None
        while True:
            budget = PageBudget.within(ticks, clock=clock)
            page = fanout.page(replace(query, limit=size, cursor=cursor, budget=budget))
            pages.append([identity_of(item) for item in page.items])
            assert page.has_more == (page.next_cursor is not None)
            if page.stats.budget_spent:
                assert len(page.items) < size
                assert page.has_more
            if not page.has_more:
                break
            cursor = page.next_cursor
            assert len(pages) < 2000, "paging did not terminate"
    finally:
        clock.close()
    expected = expected_order(scenario.entities, scenario.sort_range, scenario.descending)
    assert [i for page in pages for i in page] == expected


def test_a_read_unit_budget_cuts_the_page_at_its_proof(
    dynamodb: DynamoDBClient, new_table: Callable[[], str], fanout: Pager
) -> None:
    """8 interleaved streams of 20, pages of 50, a budget below one read of each stream: the
    first wave still runs (every page makes progress) but at one read unit a request: 3
    items of the 1 KB assumed before any item is read (4 KB, less one for the item a read
    from a cursor may take more); it proves items 0-16 in order, the page ends there, and
    the cursor goes on from item 16."""
    entities = [Entity(f"id{k:03d}", f"OPEN#{k:07d}#id{k:03d}", (k % 8,)) for k in range(160)]
    scenario = Scenario(8, entities, SortKeyRange(), descending=False)
    query = stored_query(dynamodb, new_table, scenario, identity=identity_of)
    tight = PageBudget(read_units=0.1)
    first = fanout.page(replace(query, limit=50, budget=tight))
    assert first.stats.budget_spent
    assert [identity_of(item) for item in first.items] == [f"id{k:03d}" for k in range(17)]
    assert first.has_more
    walked, page = [identity_of(item) for item in first.items], first
    while page.has_more:
        page = fanout.page(replace(query, limit=50, cursor=page.next_cursor))
        walked += [identity_of(item) for item in page.items]
    assert walked == [e.identity for e in entities]


def test_round_robin_cursors_carry_keys_of_control_characters(
    dynamodb: DynamoDBClient, new_table: Callable[[], str], fanout: Pager
) -> None:
    """Its state was JSON, where each control character takes six bytes: a key of 700 x
    U+0001 made a 5,646-character cursor that the codec then refused."""
    entities = [Entity(f"id{n}", "\x01" * 700 + f"#{n}", (0,)) for n in range(3)]
    scenario = Scenario(1, entities, SortKeyRange(), descending=False)
    query = stored_query(dynamodb, new_table, scenario, strategy=Strategy.ROUND_ROBIN)
    pages = all_pages(fanout, query, iter(lambda: 1, None))
    assert [i for page in pages for i in page] == ["id0", "id1", "id2"]


@PROPERTY_SETTINGS
@given(scenario=scenarios(), size=st.integers(1, 4))
def test_one_stream_has_more_is_exact_down_to_pages_of_one(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    fanout: Pager,
    scenario: Scenario,
    size: int,
) -> None:
    """On one stream a page says `has_more` only when an item follows: no empty last page
    (a plan made for a narrow list once bounded the next read and left it unsure)."""
    one = replace(
        scenario, streams=1, entities=[replace(e, streams=(0,)) for e in scenario.entities]
    )
    pages, expected = ordered_walk(dynamodb, new_table, fanout, one, size)
    assert [i for page in pages for i in page] == expected
    assert len(pages) == max(1, -(-len(expected) // size)), "no page after the last item"


@pytest.mark.parametrize(("streams", "items"), [(8, 13), (32, 40), (32, 7)])
def test_a_wide_list_in_pages_of_one_ends_with_its_last_item(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    fanout: Pager,
    streams: int,
    items: int,
) -> None:
    """The account's list over 8 or 32 shards with limit=1 took one empty page more than it
    had items: the plan that holds the rest of the list now says so, and the page ending its
    last window ends the list."""
    entities = [
        Entity(f"id{k:03d}", f"OPEN#{k * 7919 % 10**6:07d}#id{k:03d}", ((k * 5) % streams,))
        for k in range(items)
    ]
    scenario = Scenario(streams, entities, SortKeyRange(), descending=True)
    pages, expected = ordered_walk(dynamodb, new_table, fanout, scenario, 1)
    assert [i for page in pages for i in page] == expected
    assert len(pages) == items, "no page after the last item"


@pytest.mark.parametrize("writes_ahead", [True, False])
def test_an_oldest_first_walk_sees_an_item_written_into_an_empty_stream(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    fanout: Pager,
    writes_ahead: bool,
) -> None:
    """Oldest first, new items land ahead of the cursor. A stream that was empty is marked
    ended by the page that read it; with `writes_ahead` the mark is not trusted, so an item
    written there before the next page is requested is seen (without it, it is missed for
    the mark's 60 s: what newest-first lists accept, since their new items land behind)."""
    prefix, table = new_prefix(), new_table()
    old = [Entity(f"id{k}", f"OPEN#{k:07d}#id{k}", (k % 2,)) for k in range(4)]
    write_entities(dynamodb, table, prefix, old)
    streams = make_streams(table, prefix, 4, SortKeyRange())
    query = FanOutQuery(streams, "test", limit=1, identity=identity_of, writes_ahead=writes_ahead)
    first = fanout.page(query)
    second = fanout.page(replace(query, cursor=first.next_cursor))
    write_entities(dynamodb, table, prefix, [Entity("new", "OPEN#0000099#new", (3,))])
    walked = [identity_of(item) for item in first.items + second.items]
    page = second
    while page.has_more:
        page = fanout.page(replace(query, cursor=page.next_cursor))
        walked += [identity_of(item) for item in page.items]
    expected = ["id0", "id1", "id2", "id3", *(["new"] if writes_ahead else [])]
    assert walked == expected
