"""Exception types raised by dynashard.

Every error a caller can provoke with bad input derives from `DynashardError`, so an
API layer can map the whole family to a 4xx without catching programming errors.
"""


class DynashardError(Exception):
    """Base class of every error dynashard raises on purpose."""


class InvalidKeyError(DynashardError, ValueError):
    """A key component or a built key that could break tenant isolation or DynamoDB limits."""


class UnknownShardValueError(DynashardError, ValueError):
    """A value that has no shard count configured (never silently defaulted)."""
