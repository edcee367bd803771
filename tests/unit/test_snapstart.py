"""Ids, nonces and secrets made after a SnapStart restore are unique (decision 020).

A restore is simulated in a fresh interpreter: it runs the functions' init (imports every
snapshotted handler, as Lambda does before it takes the snapshot), with a stand-in for
Lambda's ``snapshot_restore_py`` that records the hooks the imports register. It then
forks children, each a copy of that memory, as environments restored from one snapshot
are. Python reseeds `random` in a forked child (``os.register_at_fork``), which a restore
does not: each child first puts back the generator's state from before the fork, so it
starts where a restored environment starts. A child then runs the recorded after-restore
hooks, in order, as Lambda would (or not: the controls), and makes ids.

The kernel is one here, so `os.urandom` differs between children by construction; in
Lambda, each restored microVM's kernel randomness is Lambda's part. What this proves is
ours: no id, nonce or secret comes from state the process held at snapshot time, and the
state that does (`random`, a resource built during init) is renewed by the hooks.
"""

from __future__ import annotations

import functools
import gc
import importlib
import json
import os
import random
import re
import subprocess
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from incidents.access.secret_keys import new_key
from incidents.contacts.verification import new_code
from incidents.events_out.signing import new_secret
from incidents.feed_tokens import new_token
from incidents.store import new_id

ROOT = Path(__file__).resolve().parents[2]
CHILDREN = 4
SNAPSHOTTED = (
    "lambdas.authorizer",
    "lambdas.incident_commands",
    "lambdas.incident_queries",
    "lambdas.teams",
    "lambdas.webhooks",
    "lambdas.alerts",
    "lambdas.schedules",
)
"""The functions that start from a snapshot in prod (`stacks.api_stack`)."""
RANDOM_USERS = {
    "layers/shared/python/incidents/account_limits.py": "a conflict's pause (jitter)",
    "layers/shared/python/incidents/timeline/events.py": "a conflict's pause (jitter)",
    "layers/shared/python/incidents/alerts/suppression.py": "which live-window copy to write",
    "layers/shared/python/incidents/events_out/sender.py": "a delivery's retry delay (jitter)",
    "layers/shared/python/incidents/events_out/endpoint_slots.py": "the order slots are tried",
    "packages/dynashard/src/dynashard/limits/counter.py": "which counter shard to add to",
    "packages/dynashard/src/dynashard/limits/rate_limit.py": "which bucket shard to take from",
    "packages/dynashard/src/dynashard/resharding/shard_counts.py": "which new shard to write",
    "packages/dynashard/src/dynashard/throttling/retry.py": "full-jitter back-off",
    "packages/dynashard/src/dynashard/keys/shards.py": "a random shard of a write",
    "lambdas/snapstart.py": "reseeds it after a restore",
}
"""Every module that imports `random`, and what for: a spread or a jitter, never an id,
a nonce or a secret (those come from `secrets`)."""
SOURCES = ("layers/shared/python", "lambdas", "packages/dynashard/src")


class RestoreHooks(types.ModuleType):
    """A stand-in for Lambda's ``snapshot_restore_py``: the hooks registered, in order."""

    def __init__(self) -> None:
        super().__init__("snapshot_restore_py")
        self.before: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self.after: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []

    def register_before_snapshot(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self.before.append((func, args, kwargs))
        return func

    def register_after_restore(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self.after.append((func, args, kwargs))
        return func


def made_after_restore(captured: random.Random) -> dict[str, Any]:
    """What a restored environment's first requests make: ids, nonces, secrets and jitter,
    and (a control) draws from `captured`, a generator built before the snapshot."""
    return {
        "ids": [new_id(prefix) for prefix in ("inc", "evt", "team", "key", "cm") * 4],
        "secrets": [
            *(new_key("mk_") for _ in range(4)),
            *(new_secret() for _ in range(4)),
            *(new_token("acct_x")[0] for _ in range(4)),
        ],
        "codes": [new_code() for _ in range(8)],
        "jitter": [random.random() for _ in range(8)],
        "captured": [captured.getrandbits(64) for _ in range(4)],
    }


def restored_child(
    hooks: RestoreHooks,
    runtime: types.ModuleType,
    state: tuple[Any, ...],
    run_hooks: bool,
    out: int,
) -> None:
    """A forked child as a restored environment: `random` as it was in the snapshot, the
    after-restore hooks run (or not), then what it makes written to `out` as JSON."""
    random.setstate(state)  # undo the at-fork reseed: `random` as the snapshot holds it
    warm = runtime.dynamodb(), runtime.store_without_cursors()
    if run_hooks:
        for func, args, kwargs in hooks.after:
            func(*args, **kwargs)
    made = made_after_restore(CAPTURED)
    made["warm_dropped"] = [
        runtime.dynamodb() is not warm[0],
        runtime.store_without_cursors() is not warm[1],
    ]
    os.write(out, json.dumps(made).encode())


CAPTURED = random.Random()
"""A deliberately bad source of ids: a generator built at init and so in the snapshot."""


def snapshot_and_restore(children: int) -> dict[str, Any]:
    """Init once, with the hooks recorded, then `children` restores with the hooks run and
    as many without: what each made, the hooks' names, and the generators alive at init."""
    assert "lambdas.snapstart" not in sys.modules, "the stand-in must be in place first"
    hooks = RestoreHooks()
    sys.modules["snapshot_restore_py"] = hooks
    for module in SNAPSHOTTED:
        importlib.import_module(module)
    runtime = importlib.import_module("lambdas.runtime")
    generators = [
        owner(o)
        for o in gc.get_objects()
        if isinstance(o, random.Random) and not isinstance(o, random.SystemRandom)
    ]
    runtime.dynamodb(), runtime.store_without_cursors()  # a warm-up during init
    state = random.getstate()
    made: dict[str, list[dict[str, Any]]] = {"hooks": [], "no_hooks": []}
    for run_hooks in (True, False):
        for _ in range(children):
            child = functools.partial(restored_child, hooks, runtime, state, run_hooks)
            made["hooks" if run_hooks else "no_hooks"].append(_forked(child))
    return {
        **made,
        "after_restore": [f"{f.__module__}.{f.__name__}" for f, _, _ in hooks.after],
        "before_snapshot": len(hooks.before),
        "generators": generators,
    }


def owner(generator: random.Random) -> str:
    """Who holds `generator`: ``random`` for the module's own, else the module, the class
    of the object whose attribute it is, or the function whose default it is."""
    if generator is random._inst:
        return "random"
    for referrer in gc.get_referrers(generator):
        holders = gc.get_referrers(referrer) if isinstance(referrer, dict | tuple) else [referrer]
        for holder in holders:
            if isinstance(holder, types.FunctionType):
                if referrer is holder.__kwdefaults__ or referrer is holder.__defaults__:
                    return f"{holder.__module__}.{holder.__qualname__}"
                continue
            attributes = getattr(holder, "__dict__", None)
            if isinstance(attributes, dict) and any(v is generator for v in attributes.values()):
                if isinstance(holder, types.ModuleType):
                    return holder.__name__
                return f"{type(holder).__module__}.{type(holder).__qualname__}"
    return "unknown"


def _forked(child: Callable[[int], None]) -> dict[str, Any]:
    """Run `child` in a forked process and read back the JSON it writes."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            child(write)
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    made: dict[str, Any] = json.loads(b"".join(chunks))
    return made


@pytest.fixture(scope="module")
def restores() -> dict[str, Any]:
    """One simulated snapshot, restored `CHILDREN` times with the hooks and as many
    without, in a fresh interpreter under a deployed function's environment."""
    from local.lambda_environment import lambda_environment  # noqa: PLC0415 - aws_cdk, slow

    environment = {
        **lambda_environment(),
        "AWS_ACCESS_KEY_ID": "snapshot-test",
        "AWS_SECRET_ACCESS_KEY": "snapshot-test",
        "USER_POOL_ID": "us-east-1_SnapTest1",
        "USER_POOL_CLIENT_ID": "snapshot-test-client",
    }
    probe = (
        "import json, sys; from tests.unit.test_snapstart import snapshot_and_restore; "
        f"print(json.dumps(snapshot_and_restore({CHILDREN})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def pairwise_distinct(children: Iterable[dict[str, Any]], key: str) -> bool:
    """Whether no value of `key` repeats, within one child or across them."""
    values = [value for child in children for value in child[key]]
    return len(values) == len(set(values))


def sequences_distinct(children: list[dict[str, Any]], key: str) -> bool:
    """Whether no two children drew the same sequence of `key` (for values too short to
    be unique one by one, such as six-digit codes)."""
    sequences = [tuple(child[key]) for child in children]
    return len(sequences) == len(set(sequences))


def test_the_handlers_register_the_after_restore_hooks_lambda_runs(
    restores: dict[str, Any],
) -> None:
    """Lambda runs only the hooks the handler's imports register, in their order."""
    assert restores["after_restore"] == [
        "lambdas.snapstart.reseed_random",
        "lambdas.runtime.forget_resources",
    ]
    assert restores["before_snapshot"] == 0


def test_ids_nonces_and_secrets_made_after_a_restore_are_unique(
    restores: dict[str, Any],
) -> None:
    children = restores["hooks"]
    assert len(children) == CHILDREN
    assert pairwise_distinct(children, "ids")
    assert pairwise_distinct(children, "secrets")
    assert sequences_distinct(children, "codes")
    assert sequences_distinct(children, "jitter")


def test_they_stay_unique_without_the_hooks_so_none_comes_from_random(
    restores: dict[str, Any],
) -> None:
    """Without the hooks every child's `random` draws the same sequence (the simulation
    restores it as a snapshot does): ids and secrets differ all the same."""
    children = restores["no_hooks"]
    assert not sequences_distinct(children, "jitter")
    assert pairwise_distinct(children, "ids")
    assert pairwise_distinct(children, "secrets")
    assert sequences_distinct(children, "codes")


def test_a_generator_captured_in_the_snapshot_repeats_in_every_restore(
    restores: dict[str, Any],
) -> None:
    """The control: ids drawn from state built before the snapshot repeat across restored
    environments, hooks or not, and the checks above would say so."""
    for children in (restores["hooks"], restores["no_hooks"]):
        assert not pairwise_distinct(children, "captured")
        assert not sequences_distinct(children, "captured")


def test_resources_built_during_init_are_dropped_by_a_restore(restores: dict[str, Any]) -> None:
    """A client or a store built before the snapshot (a warm-up) is rebuilt after it: no
    connection, credential or key of the snapshot's is used by a restored environment."""
    assert all(child["warm_dropped"] == [True, True] for child in restores["hooks"])
    assert all(child["warm_dropped"] == [False, False] for child in restores["no_hooks"])


def test_no_generator_of_the_project_s_is_in_the_snapshot(restores: dict[str, Any]) -> None:
    """After init the project holds no generator of its own but the test's control: the
    stores' and engines' are built after the restore, by the first request. `random`'s is
    reseeded by the hooks; the libraries' own (tempfile's names, the X-Ray SDK's local
    sampler, and here aiohttp's websocket masks, which X-Ray patches where installed) need
    no renewal (decision 020), and none of them makes an id."""
    holders = restores["generators"]
    assert "random" in holders
    assert "unknown" not in holders
    ours = [h for h in holders if h.split(".")[0] in {"incidents", "dynashard", "lambdas"}]
    assert ours == []
    assert holders.count("tests.unit.test_snapstart") == 1


def test_every_use_of_random_is_a_spread_or_a_jitter() -> None:
    """A new module drawing from `random` is named here with what for: if it makes an id, a
    nonce or a secret it must use `secrets` instead."""
    users = {
        str(path.relative_to(ROOT))
        for source in SOURCES
        for path in (ROOT / source).rglob("*.py")
        if re.search(r"^(import random|from random import)", path.read_text(), re.MULTILINE)
    }
    assert users == set(RANDOM_USERS)
