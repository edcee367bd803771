"""The timers in ``make dev``: ``python -m local.sweep_loop`` invokes `lambdas.sweeper` each
minute, as its schedule does in the cloud, and hands the firing queue's batches to
`lambdas.timer_worker`, as the queue's event source does, until it is stopped (at once,
even mid-run: the next ``make dev`` goes on from the marker, and a firing cut short fires
nothing twice)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import boto3

from incidents.timers.firing_queue import WORKER_TIMEOUT_SECONDS
from lambdas.settings import TIMER_QUEUE_URL
from local.api.proxy_events import LocalLambdaContext
from local.engines.orphans import exit_with_parent
from local.events.event_pipeline import QueuePoller, running
from local.events.messaging import REGION

EVERY_SECONDS = 60.0
RUN_SECONDS = 120
WORKERS = 2
"""Firing batches at once (the stage's ``timerWorkers``; two on a laptop)."""


def main() -> None:
    """Sweep now and then each minute, and fire what it queues, until SIGTERM or Ctrl-C."""
    from lambdas import sweeper, timer_worker  # noqa: PLC0415 - they read the environment

    exit_with_parent(signal.SIGTERM)  # make dev killed outright takes the loop along
    signal.signal(signal.SIGTERM, _interrupt)
    poller = QueuePoller(
        boto3.client("sqs", region_name=REGION), os.environ[TIMER_QUEUE_URL],
        timer_worker.handler, WORKERS, name="timer-worker", timeout_seconds=WORKER_TIMEOUT_SECONDS,
    )  # fmt: skip
    try:
        with running({"timers": poller.poll}):
            while True:
                answer = sweeper.handler({}, LocalLambdaContext(timeout_seconds=RUN_SECONDS))
                if answer["queued"] or answer["held"]:
                    print(f"timers: {answer['queued']} due, {answer['held']} held", flush=True)
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
