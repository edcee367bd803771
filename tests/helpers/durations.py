"""Where a run's time goes: a per-folder table at the end of every run, and with
``--durations-file=PATH`` every test's seconds as JSON, so the next change can compare.

Loaded with ``-p tests.helpers.durations`` (pyproject's addopts). Under pytest-xdist the
controller receives every worker's reports, so its table covers the whole run. A test's
time is its setup, call and teardown added up: a fixture counts where it is built.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

FOLDER_DEPTH = 2
"""``tests/unit/test_x.py::t`` counts for ``tests/unit``."""


class Durations:
    """Seconds per test over its phases; the table and the file at the end of the run."""

    def __init__(self, file: str | None) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.file = Path(file) if file else None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] += report.duration

    def by_folder(self) -> dict[str, tuple[int, float]]:
        """Tests and seconds per top folder, the slowest folder first."""
        folders: dict[str, list[float]] = defaultdict(list)
        for nodeid, seconds in self.seconds.items():
            parts = nodeid.split("::", 1)[0].split("/")
            folders["/".join(parts[:FOLDER_DEPTH])].append(seconds)
        totals = {name: (len(times), sum(times)) for name, times in folders.items()}
        return dict(sorted(totals.items(), key=lambda entry: -entry[1][1]))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        folders = self.by_folder()
        if not folders:
            return
        total = sum(seconds for _, seconds in folders.values())
        terminalreporter.write_sep("=", "time per folder (setup + call + teardown, all workers)")
        terminalreporter.write_line(f"{'folder':<24}{'tests':>7}{'seconds':>10}{'share':>8}")
        for name, (tests, seconds) in folders.items():
            share = seconds / total if total else 0.0
            terminalreporter.write_line(f"{name:<24}{tests:>7}{seconds:>10.1f}{share:>8.0%}")
        terminalreporter.write_line(f"{'all':<24}{len(self.seconds):>7}{total:>10.1f}")
        if self.file:
            ranked = dict(sorted(self.seconds.items(), key=lambda entry: -entry[1]))
            self.file.write_text(json.dumps({"folders": folders, "tests": ranked}, indent=1))
            terminalreporter.write_line(f"every test's seconds: {self.file}")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--durations-file",
        default=None,
        help="write every test's seconds (setup + call + teardown) to this JSON file",
    )


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        config.pluginmanager.register(Durations(config.getoption("durations_file")))
