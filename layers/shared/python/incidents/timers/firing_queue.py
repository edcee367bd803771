"""The firing queue: a sweep hands due timers to parallel workers through an SQS FIFO queue,
so timers fire as fast as workers are added, not as fast as one run's clock allows
(`docs/decisions/018-timers-fired-by-workers-on-sqs-fifo.md`).

A message names one timer as the index listed it. Its group is the timer's subject, so one
subject's timers (an incident's auto-resolve and acknowledgement timeout) fire in the order
sent, and its deduplication id is the timer and its due time, so a timer a later run reads
again while its message waits is dropped by SQS (within the queue's 5 minutes) and, after
that, loses its claim: fired once either way. A worker that dies before its transaction
commits leaves the message to come back; after, the claim is gone.
"""

from __future__ import annotations

import hashlib
import json
import logging
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from dynashard.query import Item
from incidents.fifo import BATCH, fifo_entry, send_in_order
from incidents.store import Store
from incidents.table import GSI3
from incidents.timers.firing import FiringReport
from incidents.timers.schedule import Timer, TimerKind, timer_from_item

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

logger = logging.getLogger(__name__)
SENDERS = 4
"""Batches sent at once: a run hands on a minute's timers in a few seconds."""
WORKER_TIMEOUT_SECONDS = 60
"""A worker's batch of 10 firings, each a read and a transaction, well within it."""
RECEIVES_BEFORE_DEAD_LETTER = 5
"""A firing that fails five times goes to the dead-letter queue (and pages); its timer stays
due in the table until a redrive of that queue fires it."""
MAX_GROUP_LENGTH = 128
"""SQS: a message group id holds at most 128 characters."""


def timer_message(timer: Timer) -> str:
    """A timer as a message body."""
    return json.dumps({
        "account": timer.account, "kind": timer.kind.value,
        "subject": timer.subject, "due_at": timer.due_at.isoformat(),
    })  # fmt: skip


def timer_from_message(body: str) -> Timer:
    """The timer a message names."""
    fields = json.loads(body)
    return Timer(
        account=fields["account"],
        kind=TimerKind(fields["kind"]),
        subject=fields["subject"],
        due_at=datetime.fromisoformat(fields["due_at"]),
    )


def _group(timer: Timer) -> str:
    """The message group: the timer's subject across accounts (hashed when longer than SQS
    allows)."""
    subject = f"{timer.account}#{timer.subject}"
    if len(subject) <= MAX_GROUP_LENGTH:
        return subject
    return hashlib.sha256(subject.encode()).hexdigest()


def _deduplication(timer: Timer) -> str:
    return hashlib.sha256(f"{timer.identity}#{timer.due_at.isoformat()}".encode()).hexdigest()


@dataclass(frozen=True)
class FiringQueue:
    """Hands a sweep's timers to the queue's workers, in the order given."""

    sqs: SQSClient
    url: str

    def __call__(
        self,
        store: Store,
        items: Sequence[Item],
        deadline: Callable[[], bool],
        report: FiringReport,
    ) -> bool:
        """Send `items`, `BATCH` a request, in `SENDERS` lanes at once (one subject's
        timers in one lane, in order); False if the deadline came first (what was not sent
        is read again next run). A timer that cannot be read or sent counts as failed (it
        stays due, and holds the marker at its minute); the others go on."""
        lanes: list[list[Timer]] = [[] for _ in range(SENDERS)]
        for item in items:
            try:
                timer = timer_from_item(item)
            except (KeyError, ValueError):
                logger.exception(
                    "a due timer cannot be read", extra={"item": item.get(GSI3.sort_key)}
                )
                report.failed += 1
                continue
            lanes[zlib.crc32(_group(timer).encode()) % SENDERS].append(timer)
        with ThreadPoolExecutor(SENDERS, thread_name_prefix="timer-queue") as pool:
            # each lane in a copy of this context: what the caller's context holds (its
            # logger's keys, the function being served) holds for the lane's calls too
            sent = [
                future.result()
                for future in [
                    pool.submit(copy_context().run, self._send_lane, lane, deadline)
                    for lane in lanes
                ]
            ]
        report.queued += sum(lane.sent for lane in sent)
        report.failed += sum(lane.failed for lane in sent)
        return all(lane.finished for lane in sent)

    def _send_lane(self, lane: Sequence[Timer], deadline: Callable[[], bool]) -> _Lane:
        """A lane's timers in batches: how many were sent or refused, and whether the lane
        reached its end (a refused batch stops it: its subjects' later timers must not
        overtake it)."""
        done = _Lane()
        for start in range(0, len(lane), BATCH):
            if deadline():
                done.finished = False
                return done
            batch = lane[start : start + BATCH]
            entries = [
                fifo_entry(n, timer_message(timer), _group(timer), _deduplication(timer))
                for n, timer in enumerate(batch)
            ]
            try:
                send_in_order(self.sqs, self.url, entries)
            except (ClientError, RuntimeError):
                logger.exception("the firing queue refused a batch")
                done.failed += len(lane) - start
                return done
            done.sent += len(batch)
        return done


@dataclass
class _Lane:
    """What one lane sent."""

    sent: int = 0
    failed: int = 0
    finished: bool = True
