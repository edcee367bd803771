"""What the API's authorizer passes on to every handler (API Gateway's
``requestContext.authorizer``): the caller's account, its id (a user, or an API key) and,
for an API key, its scopes. Nothing else in a request names the caller."""

from __future__ import annotations

from collections.abc import Sequence

from incidents.store import Caller

ACCOUNT = "account_id"
PRINCIPAL = "user_id"
SCOPES = "scopes"
"""Space-separated; only an API key's context has it (a person may call every route)."""


def context_of(who: Caller, scopes: Sequence[str] | None = None) -> dict[str, str]:
    """The authorizer's context for `who` (`scopes`: an API key's)."""
    context = {"principalId": who.user_id, ACCOUNT: who.account_id, PRINCIPAL: who.user_id}
    if scopes is not None:
        context[SCOPES] = " ".join(scopes)
    return context
