"""Rate limits kept in the table: a quota of `limit` requests a `window` per tenant and key,
one conditional write per request, spread over shards for a hot tenant.

Each shard is a GCRA bucket (the generic cell rate algorithm, a token bucket kept as one
number): ``TAT``, the theoretical arrival time of the next request in epoch milliseconds.
A request at ``now`` is admitted if ``TAT <= now + tolerance`` and moves ``TAT`` on by one
emission interval (``window / limit``); ``tolerance`` is a whole window, so a full quota may
come at once, then one request an interval. DynamoDB's update expressions have no ``max``,
so a bucket idle past ``now`` is restarted by a second form of the write (``TAT = now +
interval`` if ``TAT < now``); the form the TAT this process saw last predicts for ``now`` is
tried first, and a refused
condition returns the stored ``TAT`` (``ReturnValuesOnConditionCheckFailure``), so a
request costs one write, two when a bucket turns idle or busy, and a refusal no more.
A tenant's quota spread over `shards` items gives each 1/shards of it; a request takes a
random shard, so a storm on one tenant never makes one partition hot (the quota may then
refuse a little early, never admit more).

`Decision.headers` are the IETF httpapi rate-limit headers (draft-11): ``RateLimit-Policy``
and ``RateLimit``, with ``Retry-After`` on a refusal. The draft's ``t`` is the seconds until
*more* of the quota is available (a bucket refills one request an interval, so that is at
most one interval away; not the time until it is whole), and on a refusal it is the same
number as ``Retry-After``.
"""

from __future__ import annotations

import itertools
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from dynashard.handle import TableHandle
from dynashard.item import Item
from dynashard.keys.keys import build_key
from dynashard.keys.shards import validate_shard_count
from dynashard.throttling.codes import error_code

if TYPE_CHECKING:
    pass

RATE_LIMIT_SUFFIX = "ratelimit"
ATTEMPTS = 6
"""Writes a request tries while concurrent requests flip its shard between idle and busy
(each flip lets one write through, so a few always suffice)."""


@dataclass(frozen=True)
class RatePolicy:
    """`limit` requests a `window_seconds`, named `name` in the headers."""

    name: str
    limit: int
    window_seconds: int
    shards: int = 1

    def __post_init__(self) -> None:
        validate_shard_count(self.shards)
        if self.limit < self.shards or self.window_seconds < 1:
            raise ValueError(
                f"policy {self.name!r}: limit {self.limit} must be at least its {self.shards} "
                f"shards and the window at least 1 s"
            )

    @property
    def interval_ms(self) -> float:
        """Milliseconds between two requests on one shard, at the quota's pace."""
        return self.window_seconds * 1000 * self.shards / self.limit

    @property
    def tolerance_ms(self) -> float:
        """How far ahead of now a shard's next arrival may be: a whole window."""
        return self.window_seconds * 1000 - self.interval_ms

    def header(self) -> str:
        """This policy as one item of ``RateLimit-Policy``."""
        return f'"{self.name}";q={self.limit};w={self.window_seconds}'


@dataclass(frozen=True)
class Decision:
    """Whether a request is admitted, and what its answer's headers say."""

    policy: RatePolicy
    allowed: bool
    remaining: int
    """Requests the quota still admits now (its shards' share, scaled to the whole)."""
    more_seconds: int
    """Seconds until more of the quota is available (draft-11's ``t``; 0: it is whole)."""
    retry_after: int | None = None
    """On a refusal: seconds until a request is admitted (the same as `more_seconds`)."""

    def headers(self) -> dict[str, str]:
        """``RateLimit-Policy``, ``RateLimit`` and, on a refusal, ``Retry-After``."""
        headers = {
            "RateLimit-Policy": self.policy.header(),
            "RateLimit": f'"{self.policy.name}";r={self.remaining};t={self.more_seconds}',
        }
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class RateLimits:
    """Quotas of tenants' keys in one single table (thread-safe)."""

    def __init__(
        self,
        table: TableHandle,
        *,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
    ) -> None:
        self._client, self._table_name, self._schema = table.client, table.name, table.schema
        self._clock = clock
        self._rng = rng or random.Random()
        self._seen_tat: dict[tuple[str, str], float] = {}
        """Each shard's TAT as this process last saw it: it predicts, from the time of the
        next request, whether the bucket will be idle then (which form to try first)."""
        self._lock = threading.Lock()

    def take(self, tenant: str, key: str, policy: RatePolicy) -> Decision:
        """Admit one request of `tenant`'s `key` under `policy`, or refuse it."""
        now = self._clock() * 1000
        shard = self._rng.randrange(policy.shards)
        where = self._key(tenant, key, policy, shard)
        seen = (where[self._schema.partition_key]["S"], where[self._schema.sort_key]["S"])
        with self._lock:
            idle_first = self._seen_tat.get(seen, 0.0) < now
        forms = (_restart, _move_on) if idle_first else (_move_on, _restart)
        for form in itertools.islice(itertools.cycle(forms), ATTEMPTS):
            stored = self._write(where, form(now, policy), now, policy)
            if stored is None:  # the other form's condition holds, unless refused
                continue
            tat, admitted = stored
            with self._lock:
                self._seen_tat[seen] = tat
            return _decision(policy, now, tat, admitted)
        raise RuntimeError(f"rate limit {policy.name!r}: {ATTEMPTS} writes lost their race")

    def _key(self, tenant: str, key: str, policy: RatePolicy, shard: int) -> Item:
        return {
            # the shard is in the partition key: one partition key takes 1,000 writes a second
            self._schema.partition_key: {"S": build_key(tenant, RATE_LIMIT_SUFFIX, str(shard))},
            self._schema.sort_key: {"S": build_key(key, policy.name, kind="sort")},
        }

    def _write(
        self, where: Item, form: _Form, now: float, policy: RatePolicy
    ) -> tuple[float, bool] | None:
        """(the stored TAT, admitted) after one form of the write; None if the other form's
        condition holds."""
        update, condition, values = form
        try:
            response = self._client.update_item(
                TableName=self._table_name,
                Key=where,
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#tat": "TAT"},
                ExpressionAttributeValues=values,
                ReturnValues="UPDATED_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            response_fields: dict[str, Any] = dict(error.response)
            old = response_fields.get("Item") or self._read(where)
            tat = float(old["TAT"]["N"]) if old and "TAT" in old else None
            if tat is not None and tat > now + policy.tolerance_ms:
                return tat, False  # refused: the quota is spent
            return None
        return float(response["Attributes"]["TAT"]["N"]), True

    def _read(self, where: Item) -> Item | None:
        """The shard's item (an engine that does not return it with a failed condition)."""
        item: Item | None = self._client.get_item(
            TableName=self._table_name, Key=where, ConsistentRead=True
        ).get("Item")
        return item


_Form = tuple[str, str, dict[str, Any]]
"""A form of the write: its update, its condition, their values."""


def _move_on(now: float, policy: RatePolicy) -> _Form:
    """A busy shard: ``TAT += interval`` if ``now <= TAT <= now + tolerance``."""
    values = {
        ":interval": _number(policy.interval_ms),
        ":now": _number(now),
        ":latest": _number(now + policy.tolerance_ms),
    }
    return "SET #tat = #tat + :interval", "#tat BETWEEN :now AND :latest", values


def _restart(now: float, policy: RatePolicy) -> _Form:
    """An idle (or new) shard: ``TAT = now + interval`` if ``TAT < now``."""
    values = {":next": _number(now + policy.interval_ms), ":now": _number(now)}
    return "SET #tat = :next", "attribute_not_exists(#tat) OR #tat < :now", values


def _number(value: float) -> dict[str, str]:
    return {"N": str(round(value, 3))}


def _decision(policy: RatePolicy, now: float, tat: float, admitted: bool) -> Decision:
    """What the answer says, from the shard's arrival time after the request (admitted) or
    as it stands (refused)."""
    ahead = max(0.0, round(tat - now))  # whole ms: the stored µs would make 12 s read 13
    if not admitted:
        retry = max(1, math.ceil((ahead - policy.tolerance_ms) / 1000))
        return Decision(policy, False, 0, retry, retry)
    further = math.floor((policy.tolerance_ms - ahead) / policy.interval_ms) + 1
    remaining = min(policy.limit, max(0, further) * policy.shards)
    # one more request fits each time `ahead` falls by an interval: the next is this far off
    more = (ahead % policy.interval_ms or policy.interval_ms) if ahead > 0 else 0.0
    return Decision(policy, True, remaining, math.ceil(more / 1000))
