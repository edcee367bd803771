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
from dynashard.throttling import error_code, is_throttling

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
        """Run `operation`, retrying throttling; returns its result and the attempts it took.

        Other errors propagate unchanged: they are bugs or bad requests, not load.
        """
        for attempt in range(self.max_attempts):
            try:
                return operation(), attempt + 1
            except ClientError as error:
                if not is_throttling(error):
                    raise
                code = error_code(error)
                if attempt + 1 == self.max_attempts:
                    raise StreamFailedError(
                        stream_index, code, f"still throttled after {self.max_attempts} attempts"
                    ) from error
                self.sleep(self.delay(attempt))
        raise AssertionError("unreachable: max_attempts must be >= 1")
