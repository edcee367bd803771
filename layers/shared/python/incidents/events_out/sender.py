"""The sender: one delivery attempt of one event to one webhook, signed, logged, and the
retry it needs (docs "Events and webhooks": the delivery contract and its schedule).

2xx is success; any other status, a timeout (10 s) or a failed connection is retried after
`RETRY_DELAYS` (with jitter, about 79 to 89 hours in all), then the delivery is marked
failed. An endpoint whose every attempt failed for `DISABLE_AFTER` is disabled.

A receiver's signals (Standard Webhooks): ``410 Gone`` disables the endpoint at once; a
``429`` or ``503`` with ``Retry-After`` is retried no sooner than it asks (up to the
schedule's longest wait, 12 h).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum

from incidents.events_out.attempts import load_attempts, save_attempts
from incidents.events_out.circuit import park, parks
from incidents.events_out.deliveries import record_attempt
from incidents.events_out.delivery_messages import DeliveryMessage, DrainJob
from incidents.events_out.endpoint_slots import (
    SLOW_MS,
    WAIT_SECONDS,
    free_slot,
    mark_slow,
    mark_speed,
    take_slot,
)
from incidents.events_out.endpoints import EndpointPolicy, Outcome, post
from incidents.events_out.signing import delivery_headers
from incidents.events_out.webhook_models import Delivery, DeliveryStatus
from incidents.events_out.webhooks import Condition, StoredWebhook, load_webhook, update_stored
from incidents.models import parse_timestamp, timestamp
from incidents.store import Store

RETRY_DELAYS = (5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800, *[43200] * 6)
"""Seconds before each retry: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, then
12 h six times (SQS's longest visibility timeout): 16 attempts over 87.7 hours."""
JITTER = 0.1
"""Each delay is drawn from ±10 % of it (never past 12 h): retries of many deliveries that
failed together spread out. The schedule stays above 72 hours (78.9 h at the least)."""
MAX_DELAY = 43200
DISABLE_AFTER = timedelta(days=5)
GONE = 410

Poster = Callable[[str, bytes, dict[str, str], EndpointPolicy], Outcome]


class Health(Enum):
    """What an attempt's outcome makes of its endpoint and of the delivery."""

    FINE = "fine"
    PROBING = "probing"
    """It failed, and this delivery's group is the one that probes the endpoint."""
    BEHIND_PROBE = "behind probe"
    """It failed while another group probes: its retry is parked in the table."""
    DISABLED = "disabled"


def retry_delay(attempt: int, rng: random.Random, delays: tuple[int, ...] = RETRY_DELAYS) -> int:
    """Seconds to wait after failed attempt `attempt` (1-based)."""
    base = delays[attempt - 1]
    return min(MAX_DELAY, round(base * rng.uniform(1 - JITTER, 1 + JITTER)))


@dataclass(frozen=True)
class Attempted:
    """What one call of `Sender.deliver` did."""

    delivery: Delivery | None
    """The attempt as logged; None when nothing was sent (the webhook was deleted or
    disabled, or no longer takes this type)."""
    retry_in: int | None = None
    """Seconds until the next attempt, if there is one."""
    disabled: bool = False
    """Whether this attempt disabled the endpoint (failing for `DISABLE_AFTER`)."""
    latency_ms: int | None = None
    """From the event to its successful delivery."""
    drain: DrainJob | None = None
    """The webhook's parked deliveries to move on (`circuit.drain`), if they should."""


@dataclass
class Sender:
    """Delivers one message; the same code in Lambda and in ``make dev``."""

    store: Store
    policy: EndpointPolicy
    poster: Poster = post
    rng: random.Random = field(default_factory=random.Random)
    delays: tuple[int, ...] = RETRY_DELAYS
    """The schedule (the fault tests shorten it)."""

    def _parked(self, message: DeliveryMessage) -> Attempted:
        """Park `message` behind its endpoint's probe (a drain follows if the circuit closed
        meanwhile); nothing if the webhook was deleted meanwhile."""
        if not park(self.store, message):
            return Attempted(None)
        again = load_webhook(self.store, message.account_id, message.webhook_id)
        closed = again is not None and not again.failing_since
        return Attempted(None, drain=self._drain(message) if closed else None)

    def deliver(self, message: DeliveryMessage) -> Attempted:
        """Attempt `message` if its next attempt is due (else say how long it still waits),
        log it, count it, and say what follows."""
        hook = load_webhook(self.store, message.account_id, message.webhook_id)
        if hook is None or not hook.webhook.enabled or not hook.wants(message.type):
            return Attempted(None)
        if parks(self.store, hook, message):
            return self._parked(message)
        made = load_attempts(self.store, message)
        waiting = made.wait_from(self.store.clock())
        if waiting is not None:  # back before its time (a wait longer than SQS allows)
            return Attempted(None, retry_in=waiting)
        attempt = made.made + 1
        now = self.store.clock()
        slot = take_slot(self.store, message.account_id, hook, now) if hook.slow else None
        if hook.slow and slot is None:  # as many attempts to it as it may take are running
            return Attempted(None, retry_in=WAIT_SECONDS)
        try:
            outcome = self._post(hook, message, now)
        finally:
            if slot is not None:
                free_slot(self.store, message.account_id, hook, slot)
        mark_speed(self.store, message.account_id, hook, outcome.duration_ms)
        retry_in = None
        if outcome.succeeded:
            status = DeliveryStatus.SUCCEEDED
        elif attempt > len(self.delays) or outcome.status == GONE:
            status = DeliveryStatus.FAILED
        else:
            status, retry_in = DeliveryStatus.PENDING, self._wait(attempt, outcome)
        after = self.store.clock()  # the attempt took time: the wait starts from its end
        due = after + timedelta(seconds=retry_in) if retry_in else None
        delivery = record_attempt(
            self.store, message, attempt, outcome, status=status,
            next_attempt_at=timestamp(due) if due else None,
        )  # fmt: skip
        if due is not None:
            save_attempts(self.store, message, attempt, due)
        health = (
            self._gone(hook, message.account_id, now)
            if outcome.status == GONE
            else self._health(hook, message, outcome.succeeded, now)
        )
        disabled = health is Health.DISABLED
        if retry_in is not None and health is Health.BEHIND_PROBE:
            park(self.store, message)  # its retry waits in the table, not in flight (or
            retry_in = None  # the webhook was deleted meanwhile: none is due)
        gave_up = status is DeliveryStatus.FAILED and hook.probe == message.group()
        if gave_up and not disabled:  # the next parked delivery probes the endpoint
            update_stored(self.store, message.account_id, hook.webhook.id, {}, ["probe"])
        closed = outcome.succeeded and (hook.parked > 0 or hook.failing_since is not None)
        drain = self._drain(message) if closed or gave_up else None
        latency = _ms_since(message.happened_at, self.store.clock()) if outcome.succeeded else None
        return Attempted(delivery, None if disabled else retry_in, disabled, latency, drain)

    def _post(self, hook: StoredWebhook, message: DeliveryMessage, now: datetime) -> Outcome:
        """One signed POST of `message` to the endpoint, marking it slow if the POST is
        still running after `SLOW_MS`."""
        secrets_ = hook.signing_secrets(timestamp(now))
        headers = delivery_headers(secrets_, message.event_id, int(now.timestamp()), message.body)
        noticed = threading.Timer(SLOW_MS / 1000, mark_slow, (self.store, message.account_id, hook))
        noticed.start()
        try:
            return self.poster(hook.webhook.url, message.body.encode(), headers, self.policy)
        finally:
            noticed.cancel()

    def _drain(self, message: DeliveryMessage) -> DrainJob:
        started = timestamp(self.store.clock())
        return DrainJob(
            account_id=message.account_id, webhook_id=message.webhook_id, started=started
        )

    def _wait(self, attempt: int, outcome: Outcome) -> int:
        """The schedule's wait, or longer when the receiver asked for it (at most 12 h)."""
        scheduled = retry_delay(attempt, self.rng, self.delays)
        return max(scheduled, min(outcome.retry_after or 0, MAX_DELAY))

    def _gone(self, hook: StoredWebhook, account: str, now: datetime) -> Health:
        """The endpoint answered 410 Gone: disabled at once."""
        reason = f"the endpoint answered 410 Gone at {timestamp(now)}"
        changes = {"enabled": False, "disabled_reason": reason}
        update_stored(self.store, account, hook.webhook.id, changes, ["failing_since", "probe"])
        return Health.DISABLED

    def _health(
        self, hook: StoredWebhook, message: DeliveryMessage, succeeded: bool, now: datetime
    ) -> Health:
        """Keep when the endpoint started failing, with the delivery group that probes it
        from then on (`circuit`: the first to fail, or to fail after a probe was given up;
        conditional writes, so of deliveries failing side by side one probes); disable it
        after `DISABLE_AFTER` of failures, clear both on a success. Writes only when
        something changes."""
        account, webhook_id = message.account_id, hook.webhook.id
        if succeeded:
            if hook.failing_since or hook.probe:
                update_stored(self.store, account, webhook_id, {}, ["failing_since", "probe"])
            return Health.FINE
        if not hook.failing_since:
            failing = {"failing_since": timestamp(now), "probe": message.group()}
            closed: Condition = ("attribute_not_exists(failing_since)", {}, {})
            opened = update_stored(self.store, account, webhook_id, failing, [], condition=closed)
            return Health.PROBING if opened is not None else Health.BEHIND_PROBE
        probing = hook.probe == message.group()
        if hook.probe is None:  # the probe was given up: this delivery's group takes over
            probe = {"probe": message.group()}
            free: Condition = ("attribute_not_exists(probe)", {}, {})
            taken = update_stored(self.store, account, webhook_id, probe, [], condition=free)
            probing = taken is not None
        if hook.failing_since > timestamp(now - DISABLE_AFTER):
            return Health.PROBING if probing else Health.BEHIND_PROBE
        reason = f"every delivery failed from {hook.failing_since} to {timestamp(now)}"
        changes = {"enabled": False, "disabled_reason": reason}
        update_stored(self.store, account, webhook_id, changes, ["failing_since", "probe"])
        return Health.DISABLED


def _ms_since(moment: str, now: datetime) -> int:
    return max(0, int((now - parse_timestamp(moment)).total_seconds() * 1000))
