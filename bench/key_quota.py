"""A looping API key beside its account's people, through the queries handler on AWS
DynamoDB Local: one process sends a key's requests back to back for `SECONDS`, another a
person's at `PERSON_PER_SECOND`, on an account quota of `ACCOUNT_PER_MINUTE` a minute.

Run twice in one go: with each key's own bucket at the shipped share (50 % of the
account's, taken before the account's) and, as the baseline, with the share at 100 % (the
key alone can spend the whole account's quota, as when every caller shared one bucket).
What the person is refused is the figure.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.key_quota
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.support.handler_environment import handler_environment
from bench.support.report import recording_tables, save
from incidents.store import Caller, new_id
from incidents.table import TABLE_SCHEMA
from lambdas.http.principal import context_of
from lambdas.routes import ROUTES
from lambdas.settings import DEFAULT_API_KEY_QUOTA_PERCENT
from local.api.proxy_events import LocalLambdaContext, proxy_event
from local.engines.clients import create_table, use_local_credentials
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

ACCOUNT_PER_MINUTE = 600
SECONDS = 30.0
PERSON_PER_SECOND = 2.0
SHARES = (DEFAULT_API_KEY_QUOTA_PERCENT, 100)
TABLE = "key-quota"
_CONTAINER: dict[str, Any] = {}


def main() -> None:
    use_local_credentials()
    with local_engine(DYNAMODB_LOCAL) as engine:
        environment = handler_environment(
            TABLE,
            engine.endpoint,
            POWERTOOLS_METRICS_DISABLED="true",
            API_REQUESTS_PER_MINUTE=str(ACCOUNT_PER_MINUTE),
        )
        os.environ.update(environment)
        from lambdas import runtime  # noqa: PLC0415 - reads the environment set above

        create_table(runtime.dynamodb(), TABLE_SCHEMA, TABLE)
        runs = []
        for share in SHARES:
            spawn = multiprocessing.get_context("spawn")  # forked, they'd share our sockets
            settings = {**environment, "API_KEY_QUOTA_PERCENT": str(share)}
            with ProcessPoolExecutor(
                2, mp_context=spawn, initializer=_container, initargs=(settings,)
            ) as pool:
                runs.append(side_by_side(pool, share))
    report({"runs": runs, "engine": engine.description})


def _container(environment: dict[str, str]) -> None:
    os.environ.update(environment)
    from lambdas import incident_queries  # noqa: PLC0415 - reads the environment set above

    _CONTAINER["handler"] = incident_queries.handler


def _loop(job: tuple[str, dict[str, str], float, float]) -> list[int]:
    """One caller's statuses: requests from `start` (the monotonic clock) for `SECONDS`,
    one every `gap` seconds (0: back to back)."""
    _, authorizer, gap, start = job
    statuses = []
    time.sleep(max(0.0, start - time.monotonic()))
    while time.monotonic() < start + SECONDS:
        began = time.monotonic()
        event = proxy_event(
            ROUTES["account_incidents"], query={"state": ["OPEN"]}, authorizer=authorizer
        )
        statuses.append(int(_CONTAINER["handler"](event, LocalLambdaContext())["statusCode"]))
        time.sleep(max(0.0, gap - (time.monotonic() - began)))
    return statuses


def side_by_side(pool: ProcessPoolExecutor, share: int) -> dict[str, Any]:
    """A key looping and a person at their pace, in one account, for `SECONDS`."""
    account = new_id("acct")
    key = context_of(Caller(account, new_id("key")), ["incidents:read"])
    person = context_of(Caller(account, new_id("user")))
    start = time.monotonic() + 5.0  # both processes up and imported
    jobs = [("key", key, 0.0, start), ("person", person, 1 / PERSON_PER_SECOND, start)]
    key_statuses, person_statuses = pool.map(_loop, jobs)
    return {
        "share_percent": share,
        "key": dict(Counter(key_statuses)),
        "person": dict(Counter(person_statuses)),
    }


def report(results: dict[str, Any]) -> None:
    with recording_tables():
        print(
            f"An API key looping for {SECONDS:.0f} s beside a person at {PERSON_PER_SECOND:.0f} "
            f"requests a second, one account at {ACCOUNT_PER_MINUTE} a minute, "
            f"{results['engine']}:"
        )
        print()
        print("| key's bucket | key: 200 | key: 429 | person: 200 | person: 429 |")
        print("|---|---:|---:|---:|---:|")
        for run in results["runs"]:
            key, person = run["key"], run["person"]
            label = (
                "its own, 50 % of the account's (shipped)"
                if run["share_percent"] < 100
                else "the whole account's (baseline)"
            )
            print(
                f"| {label} | {key.get(200, 0)} | {key.get(429, 0)} "
                f"| {person.get(200, 0)} | {person.get(429, 0)} |"
            )
        print(f"written to {save('key_quota', json.loads(json.dumps(results, default=str)))}")


if __name__ == "__main__":
    main()
