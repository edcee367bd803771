"""Domain errors: each maps to one HTTP status and a stable ``code`` in the API.

Raised by the services for what a caller did wrong or cannot see; anything else is a
bug and becomes a 500 without details.
"""

from __future__ import annotations


class DomainError(Exception):
    """Base class; `code` is the stable machine-readable error code, `status` the HTTP one,
    `headers` what the answer carries besides (a quota's, say)."""

    code = "bad_request"
    status = 400
    headers: dict[str, str] = {}  # noqa: RUF012 - never mutated; an instance sets its own


class NotFoundError(DomainError):
    """The item does not exist in the caller's account (or the caller may not know it does)."""

    code, status = "not_found", 404


class ForbiddenError(DomainError):
    """The caller is authenticated but not allowed, e.g. not a member of the team."""

    code, status = "forbidden", 403


class VersionConflictError(DomainError):
    """A concurrent change won: the item's version is not the one the caller expected."""

    code, status = "version_conflict", 409


class PreconditionFailedError(DomainError):
    """The ``If-Match`` version does not match the stored one."""

    code, status = "precondition_failed", 412


class DetailsTooLargeError(DomainError):
    """Incident details above the stored size limit."""

    code, status = "payload_too_large", 413


class AlreadyCreatedError(DomainError):
    """A keyed create's guard exists: an earlier request with the key wrote the incident.
    Never reaches a client: the create answers with that incident."""

    code, status = "already_created", 409


class TooManyParticipantsError(DomainError):
    """More participants than one transaction can write."""

    code, status = "too_many_participants", 400


class InvalidFilterError(DomainError):
    """List filters that select nothing by construction: a time window holding no instant
    (``since`` not before ``until``), a status outside the list's state."""

    code, status = "validation_error", 400


class TooManyTeamsError(DomainError):
    """ "All my teams" for a member of more teams than one list reads."""

    code, status = "too_many_teams", 400


class ConflictError(DomainError):
    """The item already exists (e.g. the same member added twice)."""

    code, status = "conflict", 409


class LastMemberError(DomainError):
    """The last member of a team cannot leave it: nobody could read or manage it then."""

    code, status = "last_member", 409


class ThrottledError(DomainError):
    """DynamoDB throttling survived every retry (and every growth of the keys it named)."""

    code, status = "throttled", 429


class KeyReusedError(DomainError):
    """An Idempotency-Key used before for another kind of request."""

    code, status = "idempotency_key_reused", 409


class UnauthorizedError(DomainError):
    """No identity: claims missing (the request did not come through the authorizer), or a
    key that names no one (unknown, revoked and rotated-away keys alike)."""

    code, status = "unauthorized", 401


class RateLimitedError(DomainError):
    """Over a quota: the answer carries the quota's ``RateLimit-Policy``, ``RateLimit`` and
    ``Retry-After`` headers."""

    code, status = "rate_limited", 429

    def __init__(self, message: str, headers: dict[str, str]) -> None:
        super().__init__(message)
        self.headers = headers
