"""Every code an error body can carry is in the document's `ErrorCode` enum: a domain error
whose code were missing would turn its 4xx into a 500 (`error_response` checks the code)."""

from __future__ import annotations

import importlib
import pkgutil

import incidents
import lambdas
from incidents.errors import AlreadyCreatedError, DomainError
from incidents.notifications.links import LinkExpiredError, LinkUsedError
from lambdas.http.api import error_response
from lambdas.http.responses import ErrorCode


def subclasses(cls: type[DomainError]) -> set[type[DomainError]]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= subclasses(sub)
    return found


def test_every_domain_error_code_is_documented() -> None:
    for package in (incidents, lambdas):
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
            importlib.import_module(module.name)
    answered_otherwise = {
        AlreadyCreatedError,  # answered as the incident
        LinkUsedError,  # a page's link answers HTML pages (`lambdas.http.link_pages`)
        LinkExpiredError,
    }
    errors = subclasses(DomainError) - answered_otherwise
    assert len(errors) >= 15
    codes = {error.code for error in errors} | {DomainError.code}
    assert codes <= {code.value for code in ErrorCode}, codes - {c.value for c in ErrorCode}


def test_an_error_response_carries_an_enum_code() -> None:
    response = error_response(429, ErrorCode.THROTTLED, "busy")
    assert response.headers["Retry-After"] == "1"
