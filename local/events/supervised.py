"""The event pipeline as ``make dev``'s supervised child: started once the server has taken
its place, restarted whenever it dies (said on stderr, with a back-off so a crash loop does
not spin), and stopped with ``make dev``. It resumes from its checkpoint
(`local.events.event_pipeline`), so what was committed while it was down still goes out."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from local.events.event_pipeline import CHECKPOINT_FILE, READY_FILE

START_SECONDS = 30
"""A start that does not say it is ready within this fails ``make dev`` (the first) or is
retried (a restart)."""
FIRST_BACKOFF, MAX_BACKOFF = 0.5, 30.0
STEADY_SECONDS = 60.0
"""Up this long, the back-off starts again from `FIRST_BACKOFF`."""


class SupervisedPipeline:
    """``python -m local.events.event_pipeline`` with `folder` for its ready file and, unless given,
    its checkpoint."""

    def __init__(self, folder: Path, checkpoint: Path | None = None) -> None:
        self.ready = folder / "ready"
        self.checkpoint = checkpoint or folder / "stream-checkpoint.json"
        self.restarts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="pipeline-watch", daemon=True)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> None:
        """Start it and wait until it has taken its place on the stream; then watch it."""
        if not self._spawn():
            raise RuntimeError("the event pipeline did not start: see its output")
        self._watcher.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=30)
        if self._watcher.is_alive():
            self._watcher.join(timeout=5)

    def _spawn(self) -> bool:
        self.ready.unlink(missing_ok=True)
        env = {**os.environ, READY_FILE: str(self.ready), CHECKPOINT_FILE: str(self.checkpoint)}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "local.events.event_pipeline"], env=env
        )
        deadline = time.monotonic() + START_SECONDS
        while not self.ready.exists():
            if self._process.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def _watch(self) -> None:
        backoff = FIRST_BACKOFF
        while not self._stopping.is_set():
            assert self._process is not None
            started = time.monotonic()
            code = self._process.wait()
            if self._stopping.is_set():
                return
            backoff = FIRST_BACKOFF if time.monotonic() - started > STEADY_SECONDS else backoff
            print(
                f"event pipeline exited ({code}); restarting in {backoff:.1f} s, resuming "
                "from its checkpoint",
                file=sys.stderr,
                flush=True,
            )
            if self._stopping.wait(backoff):
                return
            backoff = min(MAX_BACKOFF, backoff * 2)
            self.restarts += 1
            if self._spawn():
                print("event pipeline restarted", file=sys.stderr, flush=True)
