"""Domain errors: each has a stable ``code`` the API answers with (its HTTP status is the
handler edge's, `lambdas.http.statuses`).

Raised by the services for what a caller did wrong or cannot see; anything else is a
bug and becomes a 500 without details.
"""

from __future__ import annotations


class DomainError(Exception):
    """Base class; `code` is the stable machine-readable error code."""

    code = "bad_request"


class NotFoundError(DomainError):
    """The item does not exist in the caller's account (or the caller may not know it does)."""

    code = "not_found"


class ForbiddenError(DomainError):
    """The caller is authenticated but not allowed, e.g. not a member of the team."""

    code = "forbidden"


class VersionConflictError(DomainError):
    """A concurrent change won: the item's version is not the one the caller expected."""

    code = "version_conflict"


class PreconditionFailedError(DomainError):
    """The ``If-Match`` version does not match the stored one."""

    code = "precondition_failed"


class DetailsTooLargeError(DomainError):
    """Incident details above the stored size limit."""

    code = "payload_too_large"


class AlreadyCreatedError(DomainError):
    """A keyed create's guard exists: an earlier request with the key wrote the incident.
    Never reaches a client: the create answers with that incident."""

    code = "already_created"


class TooManyParticipantsError(DomainError):
    """More participants than one transaction can write."""

    code = "too_many_participants"


class InvalidFilterError(DomainError):
    """List filters that select nothing by construction: a time window holding no instant
    (``since`` not before ``until``), a status outside the list's state."""

    code = "validation_error"


class TooManyTeamsError(DomainError):
    """ "All my teams" for a member of more teams than one list reads."""

    code = "too_many_teams"


class ConflictError(DomainError):
    """The item already exists (e.g. the same member added twice)."""

    code = "conflict"


class LastMemberError(DomainError):
    """The last member of a team cannot leave it: nobody could read or manage it then."""

    code = "last_member"


class ThrottledError(DomainError):
    """DynamoDB throttling survived every retry (and every growth of the keys it named)."""

    code = "throttled"


class KeyReusedError(DomainError):
    """An Idempotency-Key used before for another kind of request."""

    code = "idempotency_key_reused"


class UnauthorizedError(DomainError):
    """No identity: claims missing (the request did not come through the authorizer), or a
    key that names no one (unknown, revoked and rotated-away keys alike)."""

    code = "unauthorized"


class RateLimitedError(DomainError):
    """Over a quota (the answer carries the quota's ``RateLimit-Policy``, ``RateLimit`` and
    ``Retry-After`` headers: `lambdas.http.statuses.CountedRefusalError`)."""

    code = "rate_limited"
