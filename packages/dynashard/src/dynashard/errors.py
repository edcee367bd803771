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


class InvalidCursorError(DynashardError, ValueError):
    """A cursor that is malformed, tampered with, or bound to another caller or query."""


class SortKeyCollisionError(DynashardError):
    """Two different identities share a sort key, so a merge order would be ambiguous."""


class StreamFailedError(DynashardError):
    """A stream still failed after retries; the whole page fails rather than come back short."""

    def __init__(self, stream_index: int, code: str, message: str) -> None:
        super().__init__(f"stream {stream_index} failed: {code}: {message}")
        self.stream_index = stream_index
        self.code = code


class ShardMetadataError(DynashardError):
    """A shard metadata item that breaks the doubling rules (edited by hand or corrupted)."""


class WriteThrottledError(DynashardError):
    """A write was still throttled after growing its shards as far as allowed and retrying."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"write throttled: {code}: {message}")
        self.code = code


class TableNotFoundError(DynashardError, LookupError):
    """A Query named a table, or an index of it, that does not exist (in this account and
    region, or on this endpoint): a deployment or configuration mistake, named at once."""

    def __init__(self, table: str, index: str | None = None) -> None:
        what = f"index {index!r} of table {table!r}" if index else f"table {table!r}"
        super().__init__(f"{what} does not exist")
        self.table = table
        self.index = index
