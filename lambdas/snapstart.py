"""SnapStart's runtime hooks (decision 020): what an execution environment restored from a
snapshot makes its own before its first request.

Lambda snapshots a function version after its init and resumes every new environment of
it from that one snapshot: each starts with the same memory. Ids, nonces and secrets here
come from the kernel (`secrets` and `os.urandom`: KSUID payloads, API keys, webhook and
feed secrets, verification codes, the publisher's cursor key), which stays unique after a
restore; what does not is state kept in this process, so each hook here renews some:

- `reseed_random`: `random`'s generator, seeded once at import. Restored environments
  would draw the same sequence: the same back-off jitter (botocore's retries, the table's
  conflict pauses) and the same spread of writes over copies and shards, in lockstep.
- `lambdas.runtime.forget_resources`: the container's clients, stores and cached secret.

Hooks are registered with `snapshot_restore_py`, which exists only in Lambda's Python
runtime (3.12 and later); elsewhere `after_restore` keeps them here alone, and `restored`
runs them in order as Lambda would (tests, which simulate a restore, call it).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from types import ModuleType

Hook = Callable[[], None]

_AFTER_RESTORE: list[Hook] = []


def _lambda_hooks() -> ModuleType | None:
    """Lambda's runtime hooks library, where this runs in Lambda's Python runtime."""
    try:
        return importlib.import_module("snapshot_restore_py")
    except ImportError:
        return None


def after_restore(hook: Hook) -> Hook:
    """Register `hook` to run in each environment restored from a snapshot, in the order of
    registration (Lambda's order); a decorator."""
    _AFTER_RESTORE.append(hook)
    hooks = _lambda_hooks()
    if hooks is not None:
        hooks.register_after_restore(hook)
    return hook


def restored() -> None:
    """Run the hooks registered so far, as Lambda runs them after a restore."""
    for hook in _AFTER_RESTORE:
        hook()


@after_restore
def reseed_random() -> None:
    """Seed `random`'s shared generator from the kernel again (`random.seed()` with no
    argument reads `os.urandom`); a seed from the clock could repeat across environments
    restored in the same instant."""
    random.seed()
