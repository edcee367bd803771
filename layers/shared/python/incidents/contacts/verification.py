"""Verification codes: six digits from `secrets`, kept only as a digest with an expiry and
a count of wrong attempts, so a method is verified only by someone who read its message.

A code holds for `CODE_LIFETIME` and takes `MAX_ATTEMPTS` wrong guesses, then it is void
(one in 200,000 for a guesser); a new one may be asked for once a `RESEND_AFTER`, and one
address gets at most `CODES_A_DAY` codes (from any method of the account: deleting and
adding a method back gains nothing), so nobody can make a method flood a stranger's phone
or inbox with codes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

from dynashard import RateLimits, RatePolicy, Table
from incidents.errors import ConflictError, DomainError
from incidents.models import parse_timestamp, timestamp

CODE_DIGITS = 6
CODE_LIFETIME = timedelta(minutes=15)
MAX_ATTEMPTS = 5
RESEND_AFTER = timedelta(minutes=1)
CODES_A_DAY = RatePolicy("verification-codes", limit=5, window_seconds=86_400)
"""Codes one address gets in a day: five at once at most, then one every 4.8 hours."""


class InvalidCodeError(DomainError):
    """The code sent is not the method's."""

    code = "invalid_code"


class CodeExpiredError(ConflictError):
    """The method's code passed its expiry: only a new one verifies it."""

    code = "code_expired"


class TooManyAttemptsError(ConflictError):
    """The method's code took its wrong attempts and is void."""

    code = "too_many_attempts"


class AlreadyVerifiedError(ConflictError):
    """The method is verified: its code was used, and it needs no other."""

    code = "already_verified"


class CodeSentRecentlyError(ConflictError):
    """A code was made for the method less than `RESEND_AFTER` ago."""

    code = "code_sent_recently"


class TooManyCodesError(ConflictError):
    """The address got its `CODES_A_DAY` codes."""

    code = "too_many_codes"


class PendingCode(BaseModel):
    """A method's code as stored: its digest, never the code."""

    model_config = ConfigDict(frozen=True)

    digest: str
    expires_at: str
    sent_at: str
    attempts: int = 0
    """Wrong codes sent so far."""


def new_code() -> str:
    """Six random digits (`secrets`: unpredictable, unlike `random`)."""
    return f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"


def issued(method_id: str, code: str, now: datetime, last: PendingCode | None) -> PendingCode:
    """`code` as the method keeps it from `now`; `CodeSentRecentlyError` while the `last`
    code is younger than `RESEND_AFTER`."""
    if last is not None:
        again = parse_timestamp(last.sent_at) + RESEND_AFTER
        if now < again:
            raise CodeSentRecentlyError(
                f"a code was sent at {last.sent_at}; ask for another from {timestamp(again)}"
            )
    return PendingCode(
        digest=_digest(method_id, code),
        expires_at=timestamp(now + CODE_LIFETIME),
        sent_at=timestamp(now),
    )


def count_code(table: Table, account: str, address: str, now: datetime) -> None:
    """One more of the day's codes to `address` in `account`, or `TooManyCodesError` (one
    conditional write; a code that is then not made still counts, as a retry would)."""
    limits = RateLimits(table, clock=now.timestamp)
    address_key = hashlib.sha256(address.casefold().encode()).hexdigest()
    decision = limits.take(account, f"code-{address_key}", CODES_A_DAY)
    if not decision.allowed:
        again = timestamp(now + timedelta(seconds=decision.retry_after or 0))
        raise TooManyCodesError(
            f"{address} got its {CODES_A_DAY.limit} codes of the day; ask for another from {again}"
        )


def live(pending: PendingCode | None, now: datetime) -> PendingCode:
    """The method's code while it can verify it: `CodeExpiredError` past its expiry (or
    with none made), `TooManyAttemptsError` once it took its wrong attempts."""
    if pending is None or now >= parse_timestamp(pending.expires_at):
        raise CodeExpiredError("the code has expired; ask for a new one (POST …/send-verification)")
    if pending.attempts >= MAX_ATTEMPTS:
        raise TooManyAttemptsError(
            f"the code took {MAX_ATTEMPTS} wrong attempts and is void; ask for a new one "
            "(POST …/send-verification)"
        )
    return pending


def matches(method_id: str, pending: PendingCode, code: str) -> bool:
    """Whether `code` is the pending one (compared in constant time)."""
    return hmac.compare_digest(pending.digest, _digest(method_id, code))


def wrong(pending: PendingCode) -> tuple[PendingCode, InvalidCodeError]:
    """The code after one more wrong attempt, and what the caller is told."""
    counted = pending.model_copy(update={"attempts": pending.attempts + 1})
    left = MAX_ATTEMPTS - counted.attempts
    if left:
        return counted, InvalidCodeError(f"the code is wrong; {left} attempts left")
    return counted, InvalidCodeError(
        "the code is wrong, and that was the last attempt: ask for a new one "
        "(POST …/send-verification)"
    )


def _digest(method_id: str, code: str) -> str:
    """SHA-256 of the code salted with its method: equal codes of two methods differ."""
    return hashlib.sha256(f"{method_id}:{code}".encode()).hexdigest()
