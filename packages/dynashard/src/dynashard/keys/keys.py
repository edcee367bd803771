"""Key builders: join components with ``#`` without ever letting two tenants collide.

A key is only as isolating as its weakest component: an empty component or one that
contains the separator lets ``("a#b", "c")`` and ``("a", "b#c")`` build the same key,
so both are rejected, as is any key DynamoDB itself would refuse for its length.
"""

from __future__ import annotations

from typing import Literal

from dynashard.errors import InvalidKeyError
from dynashard.keys.shards import validate_shard_count

SEPARATOR = "#"
PARTITION_KEY_MAX_BYTES = 2048
SORT_KEY_MAX_BYTES = 1024

KeyKind = Literal["partition", "sort"]

_MAX_BYTES: dict[KeyKind, int] = {"partition": PARTITION_KEY_MAX_BYTES, "sort": SORT_KEY_MAX_BYTES}


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(component: object, position: int) -> str:
    return f"component {position} ({_preview(component)})"


def _check_component(component: object, position: int) -> str:
    if not isinstance(component, str):
        raise InvalidKeyError(
            f"{_describe(component, position)} must be a str, not {type(component).__name__}"
        )
    if not component:
        raise InvalidKeyError(f"{_describe(component, position)} is empty")
    if SEPARATOR in component:
        raise InvalidKeyError(
            f"{_describe(component, position)} contains the separator {SEPARATOR!r}"
        )
    return component


def _check_length(key: str, kind: KeyKind) -> str:
    size = len(key.encode())
    limit = _MAX_BYTES[kind]
    if size > limit:
        raise InvalidKeyError(
            f"{kind} key {_preview(key)} is {size} bytes UTF-8; DynamoDB allows {limit}"
        )
    return key


def build_key(*components: str, kind: KeyKind = "partition") -> str:
    """Join `components` with ``#`` after checking each one and the result's length."""
    if not components:
        raise InvalidKeyError("a key needs at least one component")
    checked = [_check_component(c, i) for i, c in enumerate(components)]
    return _check_length(SEPARATOR.join(checked), kind)


def split_key(key: str) -> tuple[str, ...]:
    """Inverse of `build_key`: the components of a key, validated the same way."""
    if not isinstance(key, str) or not key:
        raise InvalidKeyError(f"cannot split {key!r}: a key is a non-empty str")
    parts = tuple(key.split(SEPARATOR))
    for position, part in enumerate(parts):
        _check_component(part, position)
    return parts


def sharded_key(base: str, shard: int, shard_count: int) -> str:
    """Partition key of one shard: ``<base>#<shard>``, with ``0 <= shard < shard_count``."""
    validate_shard_count(shard_count)
    if isinstance(shard, bool) or not isinstance(shard, int) or not 0 <= shard < shard_count:
        raise InvalidKeyError(f"shard {shard!r} is outside 0..{shard_count - 1}")
    split_key(base)
    return _check_length(f"{base}{SEPARATOR}{shard}", "partition")


def shard_keys(base: str, shard_count: int) -> list[str]:
    """Every shard key of `base` for `shard_count` shards: what a reader fans out over."""
    return [sharded_key(base, shard, shard_count) for shard in range(shard_count)]


def split_sharded_key(key: str) -> tuple[str, int]:
    """Inverse of `sharded_key`: ``(base, shard)``."""
    parts = split_key(key)
    suffix = parts[-1]
    if (
        len(parts) < 2
        or not suffix.isdecimal()
        or not suffix.isascii()
        or (len(suffix) > 1 and suffix.startswith("0"))
    ):
        raise InvalidKeyError(f"{key!r} does not end in a shard number")
    return SEPARATOR.join(parts[:-1]), int(suffix)
