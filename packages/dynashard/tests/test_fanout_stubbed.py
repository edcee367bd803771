"""Fan-out engine with botocore's Stubber: adaptive limits, bounds, dedupe, throttling."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    PartitionStream,
    SortKeyRange,
    client_config,
)
from dynashard.errors import SortKeyCollisionError, StreamFailedError
from dynashard.query.ordered.state import OrderedState
from dynashard.query.streams import streams_family
from dynashard.throttling import RetryPolicy

CODEC = CursorCodec(b"s" * 32)
STREAMS = [PartitionStream("tbl", "PK", f"p#{n}", "SK") for n in range(2)]


def item(stream: int, key: str, ident: str | None = None) -> dict[str, Any]:
    return {
        "PK": {"S": f"p#{stream}"},
        "SK": {"S": key},
        "Id": {"S": ident or key},
        "Copy": {"N": str(stream)},
    }


def key_of(stream: int, key: str) -> dict[str, Any]:
    return {"PK": {"S": f"p#{stream}"}, "SK": {"S": key}}


def request(
    stream: int,
    limit: int,
    condition: str = "",
    values: dict[str, str] | None = None,
    start: str | None = None,
) -> dict[str, Any]:
    names = {"#dspk": "PK"}
    expression = "#dspk = :dspk"
    if condition:
        names["#dssk"] = "SK"
        expression += f" AND {condition}"
    params: dict[str, Any] = {
        "TableName": "tbl",
        "KeyConditionExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": {
            ":dspk": {"S": f"p#{stream}"},
            **{k: {"S": v} for k, v in (values or {}).items()},
        },
        "ScanIndexForward": True,
        "ConsistentRead": False,
        "ReturnConsumedCapacity": "TOTAL",
        "Limit": limit,
    }
    if start:
        params["ExclusiveStartKey"] = key_of(stream, start)
    return params


def response(items: list[dict[str, Any]], last: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"Items": items, "Count": len(items), "ScannedCount": len(items)}
    if last:
        body["LastEvaluatedKey"] = last
    return body


@pytest.fixture
def stubbed() -> Iterator[tuple[Stubber, FanOutEngine, list[float]]]:
    client = boto3.client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=client_config(1),
    )
    sleeps: list[float] = []
    retry = RetryPolicy(max_attempts=3, sleep=sleeps.append)
    # One worker: requests of a wave reach the stubber in stream order.
    with (
        Stubber(client) as stubber,
        FanOutEngine(client, CODEC, max_workers=1, retry=retry) as engine,
    ):
        yield stubber, engine, sleeps
        stubber.assert_no_pending_responses()


def test_first_wave_shares_the_page_and_refill_is_bounded_by_the_buffer(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    stubber, engine, _ = stubbed
    # Wave 1: each stream gets ceil(4 / 2) = 2.
    stubber.add_response(
        "query", response([item(0, "01"), item(0, "02")], key_of(0, "02")), request(0, 2)
    )
    stubber.add_response(
        "query", response([item(1, "05"), item(1, "06")], key_of(1, "06")), request(1, 2)
    )
    # 01, 02 are safe; 2 missing and 05, 06 buffered, so B = "06": only stream 0 (read to
    # "02" < "06") is asked again, for at most 2 items and only up to "06".
    stubber.add_response(
        "query",
        response([item(0, "03"), item(0, "04")], key_of(0, "04")),
        request(0, 2, "#dssk <= :dshi", {":dshi": "06"}, start="02"),
    )
    page = engine.page(FanOutQuery(streams=STREAMS, binding="b", limit=4))
    assert [i["SK"]["S"] for i in page.items] == ["01", "02", "03", "04"]
    assert page.has_more
    assert page.next_cursor
    assert (page.stats.requests, page.stats.round_trips, page.stats.items_read) == (3, 2, 6)
    assert page.stats.items_returned == 4
    assert page.stats.read_units == 1.5  # three requests, each at least half a unit


def test_next_page_starts_strictly_after_the_cursor(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    stubber, engine, _ = stubbed
    query = FanOutQuery(streams=STREAMS, binding="b", limit=2)
    cursor = CODEC.encode(
        streams_family(query.streams) + OrderedState("04").dumps(), query.cursor_binding()
    )
    stubber.add_response(
        "query", response([item(0, "07")]), request(0, 1, "#dssk > :dslo", {":dslo": "04"})
    )
    stubber.add_response(
        "query", response([item(1, "05")]), request(1, 1, "#dssk > :dslo", {":dslo": "04"})
    )
    page = engine.page(FanOutQuery(streams=STREAMS, binding="b", limit=2, cursor=cursor))
    assert [i["SK"]["S"] for i in page.items] == ["05", "07"]
    assert not page.has_more


def test_exhausted_streams_end_the_list(stubbed: tuple[Stubber, FanOutEngine, list[float]]) -> None:
    stubber, engine, _ = stubbed
    stubber.add_response("query", response([item(0, "01")]), request(0, 3))
    stubber.add_response("query", response([]), request(1, 3))
    page = engine.page(FanOutQuery(streams=STREAMS, binding="b", limit=5))
    assert [i["SK"]["S"] for i in page.items] == ["01"]
    assert (page.has_more, page.next_cursor) == (False, None)


def test_duplicate_identities_keep_the_first_streams_copy(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    stubber, engine, _ = stubbed
    stubber.add_response("query", response([item(0, "01", "x")]), request(0, 2))
    stubber.add_response("query", response([item(1, "01", "x"), item(1, "02", "y")]), request(1, 2))
    page = engine.page(
        FanOutQuery(streams=STREAMS, binding="b", limit=3, identity=lambda i: i["Id"]["S"])
    )
    assert [(i["Id"]["S"], i["Copy"]["N"]) for i in page.items] == [("x", "0"), ("y", "1")]
    assert page.stats.duplicates_dropped == 1


def test_two_identities_on_one_sort_key_are_a_collision(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    stubber, engine, _ = stubbed
    stubber.add_response("query", response([item(0, "01", "x")]), request(0, 2))
    stubber.add_response("query", response([item(1, "01", "y")]), request(1, 2))
    with pytest.raises(SortKeyCollisionError, match="'01'"):
        engine.page(
            FanOutQuery(streams=STREAMS, binding="b", limit=3, identity=lambda i: i["Id"]["S"])
        )


def test_throttling_is_retried_with_backoff(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    stubber, engine, sleeps = stubbed
    stubber.add_client_error(
        "query", "ProvisionedThroughputExceededException", http_status_code=400
    )
    stubber.add_client_error("query", "ThrottlingException", http_status_code=400)
    stubber.add_response("query", response([item(0, "01")]), request(0, 2))
    page = engine.page(FanOutQuery(streams=STREAMS[:1], binding="b", limit=1))
    assert [i["SK"]["S"] for i in page.items] == ["01"]
    assert page.stats.throttle_retries == 2
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.025
    assert 0 <= sleeps[1] <= 0.05


def test_a_stream_that_stays_throttled_fails_the_page(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    stubber, engine, _ = stubbed
    for _ in range(3):
        stubber.add_client_error("query", "RequestLimitExceeded", http_status_code=400)
    with pytest.raises(StreamFailedError, match="stream 0 failed: RequestLimitExceeded") as info:
        engine.page(FanOutQuery(streams=STREAMS[:1], binding="b", limit=1))
    assert info.value.code == "RequestLimitExceeded"


def test_other_errors_are_not_retried(stubbed: tuple[Stubber, FanOutEngine, list[float]]) -> None:
    stubber, engine, sleeps = stubbed
    stubber.add_client_error("query", "ValidationException", http_status_code=400)
    with pytest.raises(Exception, match="ValidationException"):
        engine.page(FanOutQuery(streams=STREAMS[:1], binding="b", limit=1))
    assert sleeps == []


def test_connection_pool_must_fit_the_workers() -> None:
    client = boto3.client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with pytest.raises(ValueError, match=r"pool \(10\) is smaller than max_workers \(32\)"):
        FanOutEngine(client, CODEC, max_workers=32)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"streams": []}, "at least one stream"),
        ({"limit": 0}, "limit must be"),
        (
            {"streams": [STREAMS[0], PartitionStream("tbl", "PK", "p", "Other")]},
            "one sort-key attribute",
        ),
    ],
)
def test_query_validation(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FanOutQuery(**{"streams": STREAMS, "binding": "b", **kwargs})


def test_consistent_reads_on_an_index_are_refused() -> None:
    with pytest.raises(ValueError, match="eventually consistent"):
        PartitionStream("tbl", "GSI1PK", "x", "GSI1SK", index_name="GSI1", consistent_read=True)


def test_the_cursor_item_takes_a_spare_slot_not_a_second_request(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    stubber, engine, _ = stubbed
    prefixed = [PartitionStream("tbl", "PK", "p#0", "SK", SortKeyRange.begins_with("k"))]
    query = FanOutQuery(streams=prefixed, binding="b", limit=1)
    cursor = CODEC.encode(
        streams_family(query.streams) + OrderedState("k1").dumps(), query.cursor_binding()
    )
    between = ("#dssk BETWEEN :dslo AND :dshi", {":dslo": "k1", ":dshi": "l"})
    # BETWEEN is inclusive: the cursor item comes back and is dropped; Limit 3 leaves it room
    # (and one more, so that the end of the list is seen without a LastEvaluatedKey).
    stubber.add_response("query", response([item(0, "k1"), item(0, "k2")]), request(0, 3, *between))
    page = engine.page(FanOutQuery(streams=prefixed, binding="b", limit=1, cursor=cursor))
    assert [i["SK"]["S"] for i in page.items] == ["k2"]
    assert (page.stats.requests, page.stats.round_trips, page.stats.items_read) == (1, 1, 2)


def test_a_read_that_goes_on_after_the_cursor_item_is_a_round_trip_of_its_own(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    """The cursor item came back alone with a LastEvaluatedKey (the 1 MB cut can do that): the
    read goes on after it, one request after the other, and the page says two round trips."""
    stubber, engine, _ = stubbed
    prefixed = [PartitionStream("tbl", "PK", "p#0", "SK", SortKeyRange.begins_with("k"))]
    query = FanOutQuery(streams=prefixed, binding="b", limit=1)
    cursor = CODEC.encode(
        streams_family(query.streams) + OrderedState("k1").dumps(), query.cursor_binding()
    )
    between = ("#dssk BETWEEN :dslo AND :dshi", {":dslo": "k1", ":dshi": "l"})
    stubber.add_response(
        "query", response([item(0, "k1")], key_of(0, "k1")), request(0, 3, *between)
    )
    stubber.add_response("query", response([item(0, "k2")]), request(0, 3, *between, start="k1"))
    page = engine.page(FanOutQuery(streams=prefixed, binding="b", limit=1, cursor=cursor))
    assert [i["SK"]["S"] for i in page.items] == ["k2"]
    assert (page.stats.requests, page.stats.round_trips) == (2, 2)
    assert page.stats.requests_per_wave == [1, 1]


def test_a_last_key_past_the_end_finishes_the_stream(
    stubbed: tuple[Stubber, FanOutEngine, list[float]],
) -> None:
    stubber, engine, _ = stubbed
    bounded = [PartitionStream("tbl", "PK", "p#0", "SK", SortKeyRange.begins_with("k"))]
    condition = ("begins_with(#dssk, :dslo)", {":dslo": "k"})
    # A key at the exclusive end ("l") is not part of the range: nothing follows it.
    stubber.add_response(
        "query", response([item(0, "k1")], key_of(0, "l")), request(0, 3, *condition)
    )
    page = engine.page(FanOutQuery(streams=bounded, binding="b", limit=2))
    assert [i["SK"]["S"] for i in page.items] == ["k1"]
    assert (page.has_more, page.stats.requests) == (False, 1)
