"""``python -m local.dev`` as a child process, for the end-to-end tests and the benchmarks.

It runs exactly what ``make dev`` runs, on a free port, and is reached over HTTP only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local.engines.clients import free_port

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 300
STOP_SECONDS = 30


class DevServerError(RuntimeError):
    """The local runtime exited or did not serve in time; the message ends with its log."""


@dataclass
class DevProcess:
    """A running ``local.dev``: its URL, the dev tokens it printed, and its log."""

    process: subprocess.Popen[bytes]
    url: str
    accounts: list[dict[str, Any]]
    log: Path
    variables: dict[str, str] = field(default_factory=dict)
    """What the banner's ``export`` line sets for the documented examples."""

    def interrupt(self, signum: int = signal.SIGINT) -> int:
        """Ctrl-C (SIGINT, as a terminal sends it) or another signal; the exit code once it
        has stopped."""
        self.process.send_signal(signum)
        return self.process.wait(timeout=STOP_SECONDS)

    def master(self) -> int:
        """gunicorn's master: the child of ``local.dev`` that is none of its helpers (the
        engine's JVM, the event pipeline, the timers' sweep loop)."""
        (pid,) = [pid for pid in children(self.process.pid) if not _helper(pid)]
        return pid

    def helpers(self) -> list[int]:
        """The helpers' process ids: the engine's JVM, the event pipeline, the sweep loop."""
        return [pid for pid in children(self.process.pid) if _helper(pid)]

    def workers(self) -> list[int]:
        """The worker processes' ids (the master's children)."""
        return children(self.master())

    def peak_rss_mb(self) -> float:
        """The largest peak resident memory so far (Linux ``VmHWM``) of the front, the
        master and each worker, in MB: each worker is a container of its own."""
        pids = [self.process.pid, self.master(), *self.workers()]
        return max(peak_rss_mb(pid) for pid in pids)

    def log_tail(self, chars: int = 3000) -> str:
        """The end of what it printed."""
        return self.log.read_text(errors="replace")[-chars:]


def _helper(pid: int) -> bool:
    command = Path(f"/proc/{pid}/cmdline").read_bytes()
    helpers = (b"java", b"local.events.event_pipeline", b"local.sweep_loop")
    return any(helper in command for helper in helpers)


@contextmanager
def dev_process(workdir: Path, settings: dict[str, str]) -> Iterator[DevProcess]:
    """Start ``local.dev`` with `settings` on top of this environment; killed if still running
    on exit (call `interrupt` to stop it the way a user does)."""
    workdir.mkdir(parents=True, exist_ok=True)
    tokens_file, log = workdir / "tokens.json", workdir / "local-api.log"
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "DEV_TOKENS_FILE": str(tokens_file),
        "PYTHONPATH": f"{ROOT / 'layers' / 'shared' / 'python'}{os.pathsep}{ROOT}",
        **settings,
    }
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "local.dev"], cwd=ROOT, env=env, stdout=output, stderr=output
        )
    try:
        url = f"http://127.0.0.1:{port}"
        running = DevProcess(process, url, [], log)
        _wait_until_serving(running, tokens_file)
        listed = json.loads(tokens_file.read_text())
        running.accounts, running.variables = listed["accounts"], listed["variables"]
        yield running
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _wait_until_serving(running: DevProcess, tokens_file: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            code = running.process.returncode
            raise DevServerError(f"local.dev exited with {code}:\n{running.log_tail()}")
        if tokens_file.exists():
            try:
                with urllib.request.urlopen(f"{running.url}/openapi.json", timeout=5):
                    return
            except OSError:
                pass
        time.sleep(0.2)
    raise DevServerError(
        f"local.dev did not serve within {STARTUP_SECONDS} s:\n{running.log_tail()}"
    )


def children(pid: int) -> list[int]:
    """The ids of process `pid`'s children, whichever of its threads started them (Linux
    ``/proc``: each thread lists its own)."""
    listed = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            listed += (task / "children").read_text().split()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
    return sorted(int(child) for child in listed)


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory of process `pid` (``VmHWM`` in ``/proc``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise ValueError(f"no VmHWM for process {pid}")
