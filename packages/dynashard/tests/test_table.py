"""0.2's door and its clear refusals: everything made from a `Table`, a missing table or
index named by both engines, a cursor refused by streams it was not made for, the version,
the command's name."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError

import dynashard
from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    IndexSchema,
    InvalidCursorError,
    PartitionStream,
    Table,
    TableNotFoundError,
    TableSchema,
    python_item,
    shard_keys,
)
from dynashard.aio import AsyncFanOutEngine
from dynashard.testing import FakeQueryClient

CODEC = CursorCodec(b"t" * 32)
SCHEMA = TableSchema("PK", "SK", (IndexSchema("GSI1", "GSI1PK", "GSI1SK"),))


def _loaded(base: str, shards: int) -> FakeQueryClient:
    fake = FakeQueryClient()
    for n, key in enumerate(shard_keys(base, shards)):
        fake.load(key, [f"{k:04d}" for k in range(n, 40, shards)])
    return fake


def test_streams_take_their_key_attributes_from_the_schema() -> None:
    table = Table(FakeQueryClient(), "things", SCHEMA)  # type: ignore[arg-type]
    (on_table,) = table.streams(["a#0"])
    (on_index,) = table.streams(["a#0"], index="GSI1")
    assert on_table == PartitionStream("things", "PK", "a#0", "SK")
    assert (on_index.partition_key, on_index.sort_key, on_index.index_name) == (
        "GSI1PK",
        "GSI1SK",
        "GSI1",
    )
    with pytest.raises(KeyError, match="GSI9"):
        table.streams(["a#0"], index="GSI9")


def test_a_cursor_is_refused_by_other_partitions_and_kept_across_a_shard_count_change() -> None:
    fake = _loaded("a", 4)
    for n, key in enumerate(shard_keys("b", 4)):
        fake.load(key, [f"{k:04d}" for k in range(n, 40, 4)])
    table = Table(fake, "t", SCHEMA)  # type: ignore[arg-type]
    first = FanOutQuery(streams=table.streams(shard_keys("a", 4)), binding="list", limit=5)
    with table.engine(CODEC, max_workers=4) as engine:
        cursor = engine.page(first).next_cursor
        assert cursor is not None
        grown = replace(first, streams=table.streams(shard_keys("a", 8)), cursor=cursor)
        resumed = [item["SK"]["S"] for item in engine.page(grown).items]
        assert resumed == ["0005", "0006", "0007", "0008", "0009"]
        other = replace(first, streams=table.streams(shard_keys("b", 4)), cursor=cursor)
        with pytest.raises(InvalidCursorError, match="another set of streams"):
            engine.page(other)
        subset = replace(first, streams=table.streams(["a#0", "b#0"]), cursor=cursor)
        with pytest.raises(InvalidCursorError, match="another set of streams"):
            engine.page(subset)


class _Missing(FakeQueryClient):
    """A client whose table (or index) does not exist, as DynamoDB answers then."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__()
        self.error = ClientError({"Error": {"Code": code, "Message": message}}, "Query")

    def query(self, **request: Any) -> dict[str, Any]:
        raise self.error


class _AsyncMissing(_Missing):
    async def query(self, **request: Any) -> dict[str, Any]:  # type: ignore[override]
        raise self.error


@pytest.mark.parametrize(
    ("code", "message", "index", "named"),
    [
        ("ResourceNotFoundException", "Requested resource not found", None, "table 'gone'"),
        (
            "ValidationException",
            "The table does not have the specified index: GSI1",
            "GSI1",
            "index 'GSI1' of table 'gone'",
        ),
    ],
)
def test_a_missing_table_or_index_is_named_by_both_engines(
    code: str, message: str, index: str | None, named: str
) -> None:
    table = Table(_Missing(code, message), "gone", SCHEMA)  # type: ignore[arg-type]
    query = FanOutQuery(streams=table.streams(["a#0"], index=index), binding="b")
    with (
        FanOutEngine(table.client, CODEC) as engine,
        pytest.raises(TableNotFoundError, match=named),
    ):
        engine.page(query)
    aio = table.async_engine(_AsyncMissing(code, message), CODEC)  # type: ignore[arg-type]
    assert isinstance(aio, AsyncFanOutEngine)
    with pytest.raises(TableNotFoundError, match=named) as raised:
        asyncio.run(aio.page(query))
    assert (raised.value.table, raised.value.index) == ("gone", index)


def test_a_str_secret_is_refused_for_its_type() -> None:
    with pytest.raises(TypeError, match="must be bytes, not str"):
        CursorCodec("s" * 32)  # type: ignore[arg-type]


def test_items_in_plain_python_values() -> None:
    table = Table(_loaded("a", 1), "t", SCHEMA)  # type: ignore[arg-type]
    with table.engine(CODEC) as engine:
        page = engine.page(FanOutQuery(streams=table.streams(["a#0"]), binding="b", limit=1))
    (plain,) = page.python_items()
    assert plain["SK"] == "0000"
    assert python_item({"n": {"N": "3"}, "s": {"SS": ["x"]}}) == {"n": Decimal(3), "s": {"x"}}
    assert page.deserialized(lambda item: item["SK"]["S"]) == ["0000"]


def test_the_version_is_the_package_s() -> None:
    assert dynashard.__version__ == "0.2.0"


def test_the_command_names_itself() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "dynashard.admin", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.startswith("usage: dynashard ")
