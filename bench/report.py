"""Small helpers shared by the benchmarks: timing and result files."""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).parent / "results"


def best_rate(operation: Callable[[], int], repeats: int = 3) -> float:
    """Operations per second of the best of `repeats` runs (`operation` returns its count)."""
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        count = operation()
        best = max(best, count / (time.perf_counter() - start))
    return best


def save(name: str, results: dict[str, Any]) -> Path:
    """Write `results` with the machine it ran on to ``bench/results/<name>.json``."""
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    payload = {"python": platform.python_version(), "machine": platform.machine(), **results}
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path
