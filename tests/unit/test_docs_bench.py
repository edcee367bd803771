"""The docs build's bench tables and charts (issue 53, point 4): a table wider than the page
is split without losing a figure, a chart or table whose result file is missing fails the
build naming the bench that writes it, and each says which run it comes from."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError

from tools import bench_results
from tools.bench_charts import CHARTS, svg
from tools.bench_tables import MAX_COLUMNS, table

WIDE = "\n".join([
    "| streams | page | a | b | c | d | e | f | g |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    "| 1 | 10 | 1.0 | 2.0 | 3.0 | 4.0 | 5.0 | 6.0 | 7.0 |",
])  # fmt: skip


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty results folder in place of ``bench/results``."""
    monkeypatch.setattr(bench_results, "RESULTS", tmp_path)
    return tmp_path


def write(folder: Path, stem: str, **fields: object) -> None:
    payload = {"python": "3.11.7", "machine": "x86_64", **fields}
    (folder / f"{stem}.json").write_text(json.dumps(payload))


def cells(markdown: str) -> list[list[list[str]]]:
    """Each table of `markdown` as rows of cells."""
    return [
        [[cell.strip() for cell in line.strip("|").split("|")] for line in part.splitlines()]
        for part in markdown.split("\n\n")
    ]


def test_a_wide_table_is_split_keeping_every_figure_and_its_row_names(results: Path) -> None:
    write(results, "fanout", tables=[WIDE])
    parts = cells(table("fanout", 1, None, keys=2))
    assert len(parts) > 1
    assert all(len(rows[0]) <= MAX_COLUMNS for rows in parts)
    assert all(rows[2][:2] == ["1", "10"] for rows in parts)
    figures = [cell for rows in parts for cell in rows[2][2:]]
    assert figures == ["1.0", "2.0", "3.0", "4.0", "5.0", "6.0", "7.0"]


def test_columns_keep_those_named_in_their_order(results: Path) -> None:
    write(results, "fanout", tables=[WIDE])
    assert cells(table("fanout", 1, [1, 9, 3], keys=1)) == [
        [["streams", "g", "a"], ["---:", "---:", "---:"], ["1", "7.0", "1.0"]]
    ]


def test_a_chart_without_its_result_file_fails_the_build_naming_the_bench(
    results: Path,
) -> None:
    with pytest.raises(
        PluginError, match=r"bench/results/hot_key\.json is missing.*bench\.hot_key"
    ):
        svg(CHARTS["hot_key"])


def test_every_chart_draws_from_the_recorded_results() -> None:
    for name, chart in CHARTS.items():
        drawn = svg(chart)
        assert drawn.startswith(b"<?xml"), name
        assert b"<svg" in drawn, name


def test_a_committed_result_file_is_named_by_the_commit_that_recorded_it(
    results: Path,
) -> None:
    write(results, "hot_key")  # a file from before runs were recorded in it
    stamp = bench_results.source("hot_key")
    run = r"(run recorded in [0-9a-f]{7,} on \d{4}-\d\d-\d\d|a run not yet committed)"
    assert re.fullmatch(rf"From `bench/results/hot_key\.json` \({run}; .+\)\.", stamp), stamp


def test_a_result_file_names_the_run_it_records(results: Path) -> None:
    write(results, "keys", run={"date": "2026-12-01", "commit": "abc1234"})
    assert bench_results.source("keys") == (
        "From `bench/results/keys.json` (run of 2026-12-01 at abc1234; x86_64, Python 3.11.7)."
    )
