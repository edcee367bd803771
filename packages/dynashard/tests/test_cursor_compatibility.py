"""Cursors already in clients' hands keep working: every cursor dynashard 0.1.0 issued for
the recorded walks below (``data/cursors-0.1.0.json``) still decodes and resumes to exactly
the page it resumed to then, with its plan fresh and with its plan stale.

The walks are deterministic (the fake client, a fixed secret and clock), so the file is
rebuilt from the release it names with ``python tests/test_cursor_compatibility.py``; a
later release adds its own file beside it and keeps this one.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dynashard import CursorCodec, FanOutEngine, FanOutQuery, PartitionStream, Strategy
from dynashard.testing import FakeQueryClient

RECORDED = Path(__file__).parent / "data" / "cursors-0.1.0.json"
CODEC = CursorCodec(b"compatibility-secret-of-32-bytes")
ISSUED_AT = 1_800_000_000.0
STALE_AFTER = 120.0
"""Seconds after which a cursor's plan is no longer used (the page reads every stream)."""


def walks() -> dict[str, tuple[FakeQueryClient, FanOutQuery]]:
    """Each recorded walk: its data and its first page's query."""
    found: dict[str, tuple[FakeQueryClient, FanOutQuery]] = {}
    few = FakeQueryClient()
    for n in range(8):
        few.load(f"few#{n}", [f"{k:04d}" for k in range(n, 200, 8)])
    found["ordered, newest first, 8 streams"] = (
        few,
        FanOutQuery(streams=_streams("few", 8), binding="few", limit=25, descending=True),
    )
    many = FakeQueryClient()
    for n in range(64):
        many.load(f"many#{n}", [f"{k:04d}#{n:02d}" for k in range(n % 7, 640, 61)])
    found["ordered with plans, oldest first, 64 streams"] = (
        many,
        FanOutQuery(streams=_streams("many", 64), binding="many", limit=10),
    )
    copies = FakeQueryClient()
    for n in range(6):
        copies.load(f"copies#{n}", [f"{k:04d}#x{k % 13:02d}" for k in range(0, 300, 3 + n)])
    found["ordered, deduplicated copies, 6 streams"] = (
        copies,
        FanOutQuery(
            streams=_streams("copies", 6),
            binding="copies",
            limit=20,
            identity=lambda item: item["SK"]["S"],
        ),
    )
    fair = FakeQueryClient()
    for n in range(16):
        fair.load(f"fair#{n}", [f"{k:04d}" for k in range(n, 320, 16)])
    found["round robin, 16 streams"] = (
        fair,
        FanOutQuery(
            streams=_streams("fair", 16), binding="fair", limit=20, strategy=Strategy.ROUND_ROBIN
        ),
    )
    return found


def _streams(prefix: str, count: int) -> list[PartitionStream]:
    return [PartitionStream("t", "PK", f"{prefix}#{n}", "SK") for n in range(count)]


def _walk(client: FakeQueryClient, query: FanOutQuery) -> list[dict[str, Any]]:
    """Every page after the first: the cursor that asked for it, its sort keys, and whether
    more came after it."""
    pages = []
    with FanOutEngine(client, CODEC, clock=lambda: ISSUED_AT) as engine:  # type: ignore[arg-type]
        page = engine.page(query)
        while page.next_cursor is not None:
            cursor = page.next_cursor
            page = engine.page(replace(query, cursor=cursor))
            keys = [item["SK"]["S"] for item in page.items]
            pages.append({"cursor": cursor, "keys": keys, "has_more": page.has_more})
    return pages


def _recorded() -> dict[str, list[dict[str, Any]]]:
    recorded: dict[str, list[dict[str, Any]]] = json.loads(RECORDED.read_text())
    return recorded


@pytest.mark.parametrize("name", sorted(walks()))
@pytest.mark.parametrize("age", [0.0, STALE_AFTER], ids=["plan-fresh", "plan-stale"])
def test_a_recorded_cursor_resumes_to_the_page_it_resumed_to(name: str, age: float) -> None:
    client, query = walks()[name]
    recorded = _recorded()[name]
    assert len(recorded) >= 5, "a walk of several pages"
    clock = ISSUED_AT + age
    with FanOutEngine(client, CODEC, clock=lambda: clock) as engine:  # type: ignore[arg-type]
        for step in recorded:
            page = engine.page(replace(query, cursor=step["cursor"]))
            assert [item["SK"]["S"] for item in page.items] == step["keys"], name
            assert page.has_more is step["has_more"], name


if __name__ == "__main__":
    RECORDED.parent.mkdir(exist_ok=True)
    walked = {name: _walk(client, query) for name, (client, query) in walks().items()}
    RECORDED.write_text(json.dumps(walked, indent=1) + "\n")
    print(f"recorded {sum(map(len, walked.values()))} cursors in {RECORDED}")
