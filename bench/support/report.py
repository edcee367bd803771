"""Small helpers shared by the benchmarks: timing, result files, and the tables they print."""

from __future__ import annotations

import contextlib
import io
import json
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).parents[1] / "results"
_recording: list[io.StringIO] = []
"""What the running bench printed, while `recording_tables` is on."""


class _Tee(io.TextIOBase):
    def __init__(self, *streams: io.TextIOBase | Any) -> None:
        self._streams = streams

    def write(self, text: str) -> int:
        for stream in self._streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self._streams:
            stream.flush()


@contextlib.contextmanager
def recording_tables() -> Iterator[None]:
    """Run a bench with its output still printed, and the markdown tables in it (runs of
    lines starting with ``|``) kept for `save`: the docs render them from the result file
    (``{{ bench: <name>#<n> }}``) instead of copies typed by hand."""
    printed = io.StringIO()
    _recording.append(printed)
    with contextlib.redirect_stdout(_Tee(sys.stdout, printed)):
        try:
            yield
        finally:
            _recording.remove(printed)


def printed_tables() -> list[str]:
    """The markdown tables printed so far under `recording_tables` (none outside it)."""
    if not _recording:
        return []
    tables: list[list[str]] = []
    previous = ""
    for line in _recording[-1].getvalue().splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    return ["\n".join(table) for table in tables]


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
    payload = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "run": _run(),
        **results,
    }
    tables = printed_tables()
    if tables:
        payload["tables"] = tables
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def _run() -> dict[str, str]:
    """This run: its UTC date and the commit it measured (``+`` when code differed from it;
    result files written by the run itself do not count), what the docs stamp each table
    with."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    date = time.strftime("%Y-%m-%d", time.gmtime())
    return {"date": date, "commit": (head or "unknown") + ("+" if dirty else "")}
