"""The HTTP status of each domain error, decided at the handler edge (as Powertools'
``exception_handler`` examples map exceptions to responses): the domain says what went
wrong and its stable ``code``; how the API answers it is said here, once."""

from __future__ import annotations

from http import HTTPStatus

from incidents.account_limits import LimitReachedError
from incidents.errors import (
    AlreadyCreatedError,
    ConflictError,
    DetailsTooLargeError,
    DomainError,
    ForbiddenError,
    KeyReusedError,
    LastMemberError,
    NotFoundError,
    PreconditionFailedError,
    RateLimitedError,
    ThrottledError,
    UnauthorizedError,
    VersionConflictError,
)
from incidents.events_out.publish_order import PublishRaceError
from incidents.events_out.webhooks import TooManyRotationsError, TooManyWebhooksError

STATUSES: dict[type[DomainError], HTTPStatus] = {
    UnauthorizedError: HTTPStatus.UNAUTHORIZED,
    ForbiddenError: HTTPStatus.FORBIDDEN,
    NotFoundError: HTTPStatus.NOT_FOUND,
    VersionConflictError: HTTPStatus.CONFLICT,
    PublishRaceError: HTTPStatus.CONFLICT,
    AlreadyCreatedError: HTTPStatus.CONFLICT,
    ConflictError: HTTPStatus.CONFLICT,
    LastMemberError: HTTPStatus.CONFLICT,
    KeyReusedError: HTTPStatus.CONFLICT,
    LimitReachedError: HTTPStatus.CONFLICT,
    TooManyWebhooksError: HTTPStatus.CONFLICT,
    TooManyRotationsError: HTTPStatus.CONFLICT,
    PreconditionFailedError: HTTPStatus.PRECONDITION_FAILED,
    DetailsTooLargeError: HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
    ThrottledError: HTTPStatus.TOO_MANY_REQUESTS,
    RateLimitedError: HTTPStatus.TOO_MANY_REQUESTS,
}
"""Any other domain error is something the caller sent wrong: 400."""


def status_of(error: DomainError) -> HTTPStatus:
    """The status of `error`'s most specific class that has one (400 for none)."""
    return next(
        (STATUSES[kind] for kind in type(error).__mro__ if kind in STATUSES),
        HTTPStatus.BAD_REQUEST,
    )


class CountedRefusalError(Exception):
    """A domain error whose answer carries headers besides: a quota's, when the request was
    counted before it was refused (over the quota, or an API key without the scope)."""

    def __init__(self, error: DomainError, headers: dict[str, str]) -> None:
        super().__init__(str(error))
        self.error = error
        self.headers = headers
