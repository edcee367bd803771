"""The HTTP plumbing every handler shares: the resolver and its JSON errors, CORS, strict
JSON bodies, the declared responses, the authorizer's principal, quotas and idempotency."""
