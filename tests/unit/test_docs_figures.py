"""Figures the docs state in prose agree with the bench results they come from (issue 40,
point 10: docs/timeline.md said "about 0.5 RCU for 25 events" where its own bench said 1.5)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_timeline_pages_cost_is_the_benchs() -> None:
    rows = json.loads((ROOT / "bench/results/timeline_reads.json").read_text())["rows"]
    rcu = rows["timeline of 600 events, limit 25"]["rcu"]
    assert f"({rcu:g} RCU for 25 events in the bench" in (ROOT / "docs/timeline.md").read_text()
