"""moto's SQS held to the limits of SQS that the delivery path depends on, so a test fails
where AWS would (moto is kinder: it lets a group's later message overtake a retried one,
measures the 12-hour visibility limit from the send, and has no in-flight cap or scan
window). Importing this module applies them to moto's backend; `scaled` shrinks the two FIFO
limits so a test can reach them with hundreds of messages, not 120,000.

What SQS does and this module makes moto do (DYNAMODB-FACTS.md, "The event path"):

- a receive decides every message's visibility at one instant, and a FIFO group whose
  message is received and hidden hands out nothing else;
- ``ChangeMessageVisibility`` may not hide a message past 12 hours from its latest
  receive: beyond it, ``InvalidParameterValue`` (not clamped);
- at most `SqsLimits.in_flight` FIFO messages received and not deleted: at the cap a
  receive returns nothing, with no error ("Messages per queue (in flight)", SQS quotas);
- a FIFO receive looks for available groups among the first `SqsLimits.scan` messages
  only, so a blocked backlog stalls the groups behind it ("Avoid large message backlogs
  with the same message group ID");
- a send costs the same whatever the queue holds (moto's counted every message, for each
  message sent).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from moto.core.utils import camelcase_to_underscores
from moto.sqs import models as sqs_models
from moto.sqs.exceptions import InvalidParameterValue, ReceiptHandleIsInvalid
from moto.sqs.models import Message, Queue, SQSBackend

VISIBILITY_LIMIT_SECONDS = 43_200


@dataclass
class SqsLimits:
    """The FIFO limits in force (SQS's own by default)."""

    in_flight: int = 120_000
    scan: int = 120_000


LIMITS = SqsLimits()
_receiving = threading.local()
"""The receive running on this thread: the instant (ms) it decides visibility at, and the
number of messages it may look through."""


@contextmanager
def scaled(in_flight: int, scan: int) -> Iterator[SqsLimits]:
    """SQS's FIFO limits scaled down to `in_flight` and `scan` for the block."""
    saved = (LIMITS.in_flight, LIMITS.scan)
    LIMITS.in_flight, LIMITS.scan = in_flight, scan
    try:
        yield LIMITS
    finally:
        LIMITS.in_flight, LIMITS.scan = saved


def _clock() -> float:
    """moto's SQS clock (ms), read where its own code reads it (tests move it)."""
    return float(sqs_models.unix_time_millis())  # type: ignore[attr-defined]


def _visible(message: Message) -> bool:
    """Past its visibility timeout, at the running receive's instant if there is one."""
    instant: float | None = getattr(_receiving, "instant", None)
    return (_clock() if instant is None else instant) > message.visible_at


def in_flight(queue: Queue, group_prefix: str = "") -> int:
    """Messages received and still hidden (SQS's in-flight count), of the FIFO groups
    starting with `group_prefix` if one is given."""
    return sum(
        1
        for m in queue._messages
        if m.approximate_receive_count > 0
        and not _visible(m)
        and str(m.group_id or "").startswith(group_prefix)
    )


def _groups_in_flight(queue: Queue) -> set[str]:
    """The FIFO groups with a message received and still hidden. moto counts a message
    whose visibility timeout has run out as in flight until it is received again, so after
    a failed batch it handed out a group's later message before its earlier one."""
    return {
        message.group_id
        for message in queue.pending_messages
        if message.group_id is not None and not _visible(message)
    }


def _messages_in_scan(queue: Queue) -> list[Message]:
    """The messages a receive may hand out: visible, and for a FIFO receive among the
    first `SqsLimits.scan` the queue holds."""
    window: int | None = getattr(_receiving, "window", None)
    held = queue._messages if window is None else queue._messages[:window]
    return [message for message in held if _visible(message) and not message.delayed]


def _receive_strictly(
    self: SQSBackend, queue_name: str, count: int, *rest: Any, **named: Any
) -> list[Message]:
    """moto's receive at one instant, within the FIFO in-flight cap and scan window."""
    queue = self.get_queue(queue_name)
    _receiving.instant = _clock()
    try:
        if queue.fifo_queue:
            room = LIMITS.in_flight - in_flight(queue)
            if room <= 0:
                return []  # SQS: no error, nothing received
            count = min(count, room)
            _receiving.window = LIMITS.scan
        return _receive(self, queue_name, count, *rest, **named)
    finally:
        _receiving.instant = _receiving.window = None


def _mark_received(self: Message, visibility_timeout: int | None = None) -> None:
    """moto's bookkeeping of a receive, and its instant: the 12 hours count from it."""
    self.received_ms = _clock()  # type: ignore[attr-defined]
    _mark(self, visibility_timeout)


def _change_visibility(
    self: SQSBackend, queue_name: str, receipt_handle: str, visibility_timeout: int
) -> None:
    """Hide a received message for `visibility_timeout` seconds from now, refused (as SQS
    refuses it) past 12 hours from its latest receive."""
    queue = self.get_queue(queue_name)
    message = next((m for m in queue._messages if m.had_receipt_handle(receipt_handle)), None)
    if message is None:
        raise ReceiptHandleIsInvalid
    received = float(getattr(message, "received_ms", message.sent_timestamp or 0))
    total = (_clock() - received) / 1000 + int(visibility_timeout)
    if not 0 <= int(visibility_timeout) <= VISIBILITY_LIMIT_SECONDS or (
        total > VISIBILITY_LIMIT_SECONDS
    ):
        raise InvalidParameterValue(
            f"Value {visibility_timeout} for parameter VisibilityTimeout is invalid. Reason: "
            f"Total VisibilityTimeout for the message is beyond the limit "
            f"[{VISIBILITY_LIMIT_SECONDS} seconds]"
        )
    message.change_visibility(visibility_timeout)
    if _visible(message):
        queue.pending_messages.discard(message)


class _Attributes(Mapping[str, Any]):
    """A queue's attributes as moto's property lists them, each worked out when read. moto
    reads one (``ContentBasedDeduplication``) for every message sent, and its property
    counts every message for the approximate numbers first: a send cost as many steps as
    the queue held messages, where SQS's costs none, so a test of thousands queued ran for
    minutes on the stand-in alone."""

    def __init__(self, queue: Queue) -> None:
        names = [
            *queue.BASE_ATTRIBUTES,
            *(queue.FIFO_ATTRIBUTES if queue.fifo_queue else ()),
            *(queue.KMS_ATTRIBUTES if queue.kms_master_key_id else ()),  # type: ignore[attr-defined]
        ]
        self._read: dict[str, Callable[[], Any]] = {
            name: partial(getattr, queue, camelcase_to_underscores(name)) for name in names
        }
        if queue.policy:
            self._read["Policy"] = lambda: queue.policy
        if queue.redrive_policy:
            self._read["RedrivePolicy"] = lambda: json.dumps(queue.redrive_policy)

    def __getitem__(self, name: str) -> Any:
        value = self._read[name]()
        return str(value).lower() if isinstance(value, bool) else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._read)

    def __len__(self) -> int:
        return len(self._read)


_receive = SQSBackend.receive_message
_mark = Message.mark_received


def _install() -> None:
    """Apply the limits to moto's SQS."""
    patches: dict[tuple[type, str], Any] = {
        (SQSBackend, "receive_message"): _receive_strictly,
        (SQSBackend, "change_message_visibility"): _change_visibility,
        (Message, "mark_received"): _mark_received,
        (Message, "visible"): property(_visible),
        (Queue, "pending_message_groups"): property(_groups_in_flight),
        (Queue, "messages"): property(_messages_in_scan),
        (Queue, "attributes"): property(_Attributes),
    }
    for (owner, name), patch in patches.items():
        setattr(owner, name, patch)


_install()
