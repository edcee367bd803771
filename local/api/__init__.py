"""The local API: API Gateway's stand-in, its front and workers, and ``make dev`` as a child
process; the call log the least-privilege check reads."""
