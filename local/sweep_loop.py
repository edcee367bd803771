"""The timers' sweep in ``make dev``: ``python -m local.sweep_loop`` invokes
`lambdas.sweeper` each minute, as its schedule does in the cloud, until it is stopped (it
stops between runs, or at once if a run is underway: the next ``make dev`` goes on from the
marker, and a run cut short fires nothing twice)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from local.api.proxy_events import LocalLambdaContext

EVERY_SECONDS = 60.0
RUN_SECONDS = 120


def main() -> None:
    """Sweep now and then each minute until SIGTERM or Ctrl-C."""
    from lambdas import sweeper  # noqa: PLC0415 - the handler reads the environment at import

    signal.signal(signal.SIGTERM, _interrupt)
    try:
        while True:
            answer = sweeper.handler({}, LocalLambdaContext(timeout_seconds=RUN_SECONDS))
            if answer["fired"] or answer["failed"]:
                print(f"timers: {answer['fired']} fired, {answer['failed']} failed", flush=True)
            time.sleep(EVERY_SECONDS)
    except KeyboardInterrupt:
        pass


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def sweep_loop() -> Iterator[None]:
    """The loop as a child of ``make dev`` (the server's master holds no threads into its
    workers' fork), with the server's environment; stopped with it."""
    process = subprocess.Popen([sys.executable, "-m", "local.sweep_loop"])
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


if __name__ == "__main__":
    main()
