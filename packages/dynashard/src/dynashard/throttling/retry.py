"""Retries: back off from DynamoDB's throttling errors with full jitter.

The engine retries here (rather than only through botocore's retry modes) so that every
attempt is visible in page statistics and a stream that keeps failing fails its page
with a clear error instead of coming back short.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from botocore.exceptions import ClientError

from dynashard.errors import StreamFailedError
from dynashard.throttling.codes import error_code, is_throttling

T = TypeVar("T")


@dataclass
class RetryPolicy:
    """Full-jitter exponential back-off: sleep ``uniform(0, min(cap, base * 2**attempt))``."""

    max_attempts: int = 6
    base_delay: float = 0.025
    max_delay: float = 1.0
    sleep: Callable[[float], None] = field(default=time.sleep)
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts counts the first call and must be >= 1")

    def delay(self, attempt: int) -> float:
        """Back-off before retry number `attempt` (0-based)."""
        return self.rng.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))

    def call(self, stream_index: int, operation: Callable[[], T]) -> tuple[T, int]:
        """Run one stream's request; a stream still throttled at the end fails its page."""
        return self.run(operation, give_up=stream_gives_up(stream_index, self.max_attempts))

    def run(
        self,
        operation: Callable[[], T],
        *,
        give_up: Callable[[ClientError], Exception],
        on_throttle: Callable[[ClientError], bool] = lambda _: False,
    ) -> tuple[T, int]:
        """Run `operation`, retrying throttling; returns its result and the attempts it took.

        After a throttled attempt `on_throttle` may act on the error (e.g. grow a shard
        count); if it returns True the retry goes at once, else after the back-off. The
        last throttled attempt raises ``give_up(error)``. Other errors propagate unchanged:
        they are bugs or bad requests, not load.
        """
        for attempt in range(self.max_attempts):
            try:
                return operation(), attempt + 1
            except ClientError as error:
                self.check_retry(error, attempt, give_up)
                if not on_throttle(error):
                    self.sleep(self.delay(attempt))
        raise AssertionError("unreachable: max_attempts must be >= 1")

    def check_retry(
        self, error: ClientError, attempt: int, give_up: Callable[[ClientError], Exception]
    ) -> None:
        """Return if `error` after attempt number `attempt` (0-based) is to be retried;
        raise it when it is not throttling, and ``give_up(error)`` after the last attempt.
        (Shared by the blocking `run` and `dynashard.aio`'s awaiting twin.)"""
        if not is_throttling(error):
            raise error
        if attempt + 1 == self.max_attempts:
            raise give_up(error) from error


def stream_gives_up(stream_index: int, attempts: int) -> Callable[[ClientError], Exception]:
    """The error a stream still throttled after `attempts` fails its page with."""

    def give_up(error: ClientError) -> Exception:
        detail = f"still throttled after {attempts} attempts"
        return StreamFailedError(stream_index, error_code(error), detail)

    return give_up
