"""Fan-out edge cases found from outside: each failed before its fix.

- ``read_all`` deadlocked when a stream finished before the consumer registered its done
  callback (40 empty streams on an instant client hung 20 of 20 tries);
- an inverted range sent a Query in ``round_robin`` and ``read_all`` (DynamoDB answers a
  ValidationException) but returned ``[]`` in ``ordered``;
- ``round_robin``'s cursor grew past what the engine accepts (about 160 streams, page 70).
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    PartitionStream,
    SortKeyRange,
    Strategy,
)
from dynashard.query.cursor import MAX_TOKEN_CHARS
from dynashard.testing import FakeQueryClient

CODEC = CursorCodec(b"e" * 32)


class CountingClient(FakeQueryClient):
    """The fake Query, counting requests (an instant client: no latency at all)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0
        self._lock = threading.Lock()

    def query(self, **request: Any) -> dict[str, Any]:
        with self._lock:
            self.requests += 1
        return super().query(**request)


def streams(count: int, sort_range: SortKeyRange | None = None) -> list[PartitionStream]:
    return [
        PartitionStream("t", "PK", f"p#{n}", "SK", sort_range or SortKeyRange())
        for n in range(count)
    ]


def walk(client: CountingClient, query: FanOutQuery) -> tuple[list[str], int]:
    """Every page of `query` to the end: the sort keys in order and the longest cursor."""
    seen: list[str] = []
    longest = 0
    with FanOutEngine(client, CODEC) as engine:  # type: ignore[arg-type]
        while True:
            page = engine.page(query)
            seen += [item["SK"]["S"] for item in page.items]
            if page.next_cursor is None:
                return seen, longest
            longest = max(longest, len(page.next_cursor))
            query = replace(query, cursor=page.next_cursor)


def run_with_deadline(action: Any, seconds: float = 20) -> Any:
    """Run `action` on a thread; fail (instead of hanging the suite) if it does not end."""
    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.setdefault("value", action()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "deadlocked"
    return result["value"]


@pytest.mark.parametrize("attempt", range(20))
def test_read_all_of_many_empty_streams_never_hangs(attempt: int) -> None:
    client = CountingClient()
    with FanOutEngine(client, CODEC, max_workers=8) as engine:  # type: ignore[arg-type]
        items = run_with_deadline(lambda: list(engine.read_all(streams(40), page_size=1)))
    assert items == []
    assert client.requests == 40


def test_read_all_with_tiny_pages_and_a_consumer_that_stops_early() -> None:
    client = CountingClient()
    for n in range(3):
        client.load(f"p#{n}", [f"{k:03d}" for k in range(30)])
    with FanOutEngine(client, CODEC, max_workers=3) as engine:  # type: ignore[arg-type]
        everything = run_with_deadline(lambda: list(engine.read_all(streams(3), page_size=1)))
        assert len(everything) == 90
        reader = engine.read_all(streams(3), page_size=1)
        first = next(reader)
        reader.close()  # the workers must not wait for a consumer that has gone
    assert first["SK"]["S"] == "000"


@pytest.mark.parametrize("strategy", [Strategy.ORDERED, Strategy.ROUND_ROBIN])
def test_an_inverted_range_returns_nothing_and_sends_nothing(strategy: Strategy) -> None:
    client = CountingClient()
    inverted = streams(4, SortKeyRange.between("z", "a"))
    with FanOutEngine(client, CODEC) as engine:  # type: ignore[arg-type]
        page = engine.page(FanOutQuery(streams=inverted, binding="b", strategy=strategy))
        assert (page.items, page.has_more, page.next_cursor) == ([], False, None)
        assert list(engine.read_all(inverted)) == []
    assert client.requests == 0


def test_round_robin_cursors_stay_accepted_at_1024_streams() -> None:
    client = CountingClient()
    for n in range(1024):
        client.load(f"p#{n}", [f"OPEN#2026-11-23T10:{n % 60:02d}:00.000000Z#inc_{n:027d}{k}"
                               for k in range(2)])  # fmt: skip
    query = FanOutQuery(streams=streams(1024), binding="b", limit=10, strategy=Strategy.ROUND_ROBIN)
    seen, longest = walk(client, query)
    assert len(seen) == len(set(seen)) == 2048
    assert longest < 1024 < MAX_TOKEN_CHARS


@pytest.mark.parametrize("page_size", [1, 3, 7])
def test_has_more_is_exact_when_one_stream_ends_with_the_page(page_size: int) -> None:
    """DynamoDB returns a LastEvaluatedKey at Limit even when nothing follows: asking the one
    stream for one item more tells the end from a full page, with no extra request."""
    client = CountingClient()
    client.load("p#0", [f"{k:02d}" for k in range(page_size)])
    with FanOutEngine(client, CODEC) as engine:  # type: ignore[arg-type]
        page = engine.page(FanOutQuery(streams=streams(1), binding="b", limit=page_size))
    assert (len(page.items), page.has_more, page.next_cursor) == (page_size, False, None)
    assert client.requests == 1


def test_copies_count_once_when_sizing_a_refill() -> None:
    """Every incident on two of eight teams: counting copies apiece set the refill bound short
    of the page's end (3 round trips a page of 10, median); distinct identities take 2."""
    rng = random.Random(3)
    client = CountingClient()
    homes: dict[int, list[str]] = {n: [] for n in range(8)}
    for n in range(2000):
        key = f"{rng.randrange(10**12):012d}#{n:05d}"
        for stream in rng.sample(range(8), 2):
            homes[stream].append(key)
    for stream, keys in homes.items():
        client.load(f"p#{stream}", keys)
    query = FanOutQuery(
        streams=streams(8), binding="b", limit=10, descending=True, identity=lambda i: i["SK"]["S"]
    )
    trips, seen = [], []
    with FanOutEngine(client, CODEC) as engine:  # type: ignore[arg-type]
        for _ in range(20):
            page = engine.page(query)
            trips.append(page.stats.round_trips)
            seen += [item["SK"]["S"] for item in page.items]
            query = replace(query, cursor=page.next_cursor)
    assert seen == sorted({k for keys in homes.values() for k in keys}, reverse=True)[:200]
    assert statistics.median(trips) <= 2
    assert max(trips) <= 3


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    width=st.integers(1, 300),
    count=st.integers(0, 600),
    size=st.integers(1, 40),
    descending=st.booleans(),
    prefixed=st.booleans(),
    seed=st.integers(0, 10**6),
)
def test_planned_pages_concatenate_to_the_exact_list(
    width: int, count: int, size: int, descending: bool, prefixed: bool, seed: int
) -> None:
    """Wide fan-outs (up to 300 streams, pages of 1-40), copies on up to three streams: the
    pages read from cursor plans must give exactly what reading every stream gives."""
    rng = random.Random(seed)
    client = CountingClient()
    homes: dict[int, list[str]] = {n: [] for n in range(width)}
    for n in range(count):
        key = f"{rng.choice('AB')}#{rng.randrange(10**9):09d}#{n:04d}"
        for stream in rng.sample(range(width), rng.randint(1, min(3, width))):
            homes[stream].append(key)
    for stream, keys in homes.items():
        client.load(f"p#{stream}", keys)
    sort_range = SortKeyRange.begins_with("A#") if prefixed else SortKeyRange()
    query = FanOutQuery(
        streams=streams(width, sort_range),
        binding="b",
        limit=size,
        descending=descending,
        identity=lambda item: item["SK"]["S"],
    )
    expected = sorted(
        {k for keys in homes.values() for k in keys if sort_range.contains(k)}, reverse=descending
    )
    seen, longest = walk(client, query)
    assert seen == expected
    assert longest < 1024


def test_a_plan_is_trusted_for_a_minute_only() -> None:
    """A planned page reads only the streams its plan lists: an item written meanwhile into
    another stream, inside the page's key span, is seen once the plan is too old to use."""
    client = CountingClient()
    for n in range(64):
        client.load(f"p#{n}", [f"{k:03d}#{n:02d}" for k in range(0, 600, 64)])
    now = [1_000_000.0]
    query = FanOutQuery(streams=streams(64), binding="b", limit=5, descending=True)
    with FanOutEngine(client, CODEC, clock=lambda: now[0]) as engine:  # type: ignore[arg-type]
        first = engine.page(query)
        planned = replace(query, cursor=first.next_cursor)
        last = first.items[-1]["SK"]["S"]
        late = last[:-1] + chr(ord(last[-1]) - 1) + "5"  # next after the cursor, newest first
        client.load("p#63", [late])
        fresh = engine.page(planned)
        now[0] += 61
        stale = engine.page(planned)
    assert fresh.stats.round_trips == 1, "the plan was used"
    assert fresh.stats.requests <= 5
    assert late not in [i["SK"]["S"] for i in fresh.items]
    assert stale.items[0]["SK"]["S"] == late, "a stale plan is dropped: every stream is read"


class RecordingClient(CountingClient):
    """Counts requests per partition, and can answer as if later than now."""

    def __init__(self) -> None:
        super().__init__()
        self.partitions: list[str] = []

    def query(self, **request: Any) -> dict[str, Any]:
        self.partitions.append(request["ExpressionAttributeValues"][":dspk"]["S"])
        return super().query(**request)


def test_an_ended_stream_is_skipped_while_the_cursor_is_fresh() -> None:
    """Stream 7 holds one item, the newest: once page 1 returned it, later pages do not ask
    stream 7 again; an item written there since, just after the cursor, is seen once 60 s
    have passed (the same blind spot, and the same bound, as a plan)."""
    client = RecordingClient()
    for n in range(7):
        client.load(f"p#{n}", [f"{k:03d}#{n}" for k in range(0, 700, 7)])
    client.load("p#7", ["999#7"])
    now = [1_000_000.0]
    query = FanOutQuery(streams=streams(8), binding="b", limit=10, descending=True)
    with FanOutEngine(client, CODEC, clock=lambda: now[0]) as engine:  # type: ignore[arg-type]
        first = engine.page(query)
        assert "999#7" in [i["SK"]["S"] for i in first.items]
        client.partitions.clear()
        second = engine.page(replace(query, cursor=first.next_cursor))
        assert "p#7" not in client.partitions
        last = second.items[-1]["SK"]["S"]
        late = last[:-1] + chr(ord(last[-1]) - 1) + "x"  # next after the cursor, newest first
        client.load("p#7", [late])
        third = replace(query, cursor=second.next_cursor)
        fresh = [i["SK"]["S"] for i in engine.page(third).items]
        now[0] += 61
        stale = [i["SK"]["S"] for i in engine.page(third).items]
    assert late not in fresh
    assert stale[0] == late


def quiet_walk(extra: list[str]) -> tuple[list[int], list[int]]:
    """Eight pages of 20 over four busy streams and stream 4, which holds the four newest
    items and `extra`: per page, the requests stream 4 got and the round trips."""
    client = RecordingClient()
    for n in range(4):
        client.load(f"p#{n}", [f"{k:04d}#{n}" for k in range(0, 4000, 4)])
    client.load("p#4", ["9999#4", "9998#4", "9997#4", "9996#4", *extra])
    query = FanOutQuery(streams=streams(5), binding="b", limit=20, descending=True)
    asked: list[int] = []
    trips: list[int] = []
    with FanOutEngine(client, CODEC) as engine:  # type: ignore[arg-type]
        for _ in range(8):
            client.partitions.clear()
            page = engine.page(query)
            asked.append(client.partitions.count("p#4"))
            trips.append(page.stats.round_trips)
            query = replace(query, cursor=page.next_cursor)
    return asked, trips


def test_a_quiet_stream_is_read_to_its_next_item_then_left_out_until_it() -> None:
    """Stream 4 supplies page 1, then nothing: page 2 reads it once without a bound and
    finds its next item far older (``0000#4``); the cursor then carries that it holds
    nothing until there, and the pages after leave it out (it was read on every page)."""
    asked, trips = quiet_walk(["0000#4"])
    assert asked[1] == 1
    assert asked[2:] == [0] * 6
    assert max(trips[2:]) == 1


def test_a_quiet_stream_read_to_its_end_is_left_out() -> None:
    """The same walk without the far item: the read finds nothing, and the pages after it
    leave stream 4 out."""
    asked, _ = quiet_walk([])
    assert asked[-4:] == [0, 0, 0, 0]


def test_a_walk_that_leaves_a_quiet_stream_out_still_reaches_its_next_item() -> None:
    """Left out until its next item, stream 4 supplies it in its place: the walk to the
    end returns every item once, in order."""
    client = RecordingClient()
    for n in range(4):
        client.load(f"p#{n}", [f"{k:04d}#{n}" for k in range(0, 400, 4)])
    client.load("p#4", ["9999#4", "9998#4", "0201#4", "0000#4"])
    query = FanOutQuery(streams=streams(5), binding="b", limit=20, descending=True)
    keys: list[str] = []
    with FanOutEngine(client, CODEC) as engine:  # type: ignore[arg-type]
        while True:
            page = engine.page(query)
            keys += [item["SK"]["S"] for item in page.items]
            if not page.next_cursor:
                break
            query = replace(query, cursor=page.next_cursor)
    expected = [f"{k:04d}#{n}" for k in range(0, 400, 4) for n in range(4)]
    expected += ["9999#4", "9998#4", "0201#4", "0000#4"]
    assert keys == sorted(expected, reverse=True)


@pytest.mark.parametrize(("before", "after", "size"), [(8, 16, 10), (6, 9, 10), (32, 64, 5)])
def test_a_cursor_outlives_a_grown_shard_count(before: int, after: int, size: int) -> None:
    """A shard count that grows between two pages changes the stream list under the same
    binding: the cursor's plan and quiet counts no longer fit, and are ignored, never a
    400. The next page goes on exactly after the cursor."""
    client = RecordingClient()
    homes: dict[int, list[str]] = {n: [] for n in range(after)}
    for k in range(1000):
        homes[k % after].append(f"{k * 3:05d}#{k % after:02d}")
    for n, keys in homes.items():
        client.load(f"p#{n}", keys)
    everything = sorted((k for keys in homes.values() for k in keys), reverse=True)
    query = FanOutQuery(streams=streams(before), binding="b", limit=size, descending=True)
    with FanOutEngine(client, CODEC) as engine:  # type: ignore[arg-type]
        first = engine.page(query)
        second = engine.page(replace(query, streams=streams(after), cursor=first.next_cursor))
    last = first.items[-1]["SK"]["S"]
    expected = [k for k in everything if k < last][:size]
    assert [i["SK"]["S"] for i in second.items] == expected


class SlowClient(CountingClient):
    """Every Query takes 30 ms."""

    def query(self, **request: Any) -> dict[str, Any]:
        time.sleep(0.03)
        return super().query(**request)


def test_a_page_reports_its_wall_clock_time() -> None:
    client = SlowClient()
    client.load("p#0", ["a", "b"])
    with FanOutEngine(client, CODEC) as engine:  # type: ignore[arg-type]
        page = engine.page(FanOutQuery(streams=streams(1), binding="b", limit=5))
    assert page.stats.round_trips == 1
    assert 30 <= page.stats.elapsed_ms < 10_000
