"""The bench's result files (``bench/results/<name>.json``) as the docs build reads them:
loaded with a message that says which bench writes a missing one, and each named with the
run it holds, so a reader can tell a fresh figure from an old one."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
Results = dict[str, Any]


def load(stem: str) -> Results:
    """``bench/results/<stem>.json``; a missing file fails the build, naming its bench."""
    path = RESULTS / f"{stem}.json"
    if not path.exists():
        raise PluginError(
            f"bench/results/{stem}.json is missing: the docs render it, so write it first "
            f"(python -m bench.{stem}, or make bench)"
        )
    loaded: Results = json.loads(path.read_text())
    return loaded


def source(stem: str) -> str:
    """Where a table or chart of `stem` comes from: the file, the run, the machine."""
    results = load(stem)
    machine = f"{results['machine']}, Python {results['python']}"
    return f"From `bench/results/{stem}.json` ({_run(stem, results)}; {machine})."


def _run(stem: str, results: Results) -> str:
    """The run the file holds: the one it records (``run``: date and commit), else the
    commit that last wrote it into the repository."""
    recorded = results.get("run")
    if recorded:
        return f"run of {recorded['date']} at {recorded['commit']}"
    return _committed(f"bench/results/{stem}.json")


@functools.cache
def _committed(path: str) -> str:
    """The commit that last recorded `path` and its date, from git; said plainly when the
    file has changed since or git cannot tell (a copy of the sources without history)."""
    if _git("status", "--porcelain", "--", path):
        return "a run not yet committed"
    last = _git("log", "-1", "--format=%h %cs", "--", path)
    if not last:
        return "run of unknown date: no git history"
    commit, date = last.split()
    return f"run recorded in {commit} on {date}"


def _git(*args: str) -> str:
    """What git prints for `args` in the repository ('' when git fails)."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else ""
