"""Looping API keys beside their account's people, through the queries handler on AWS
DynamoDB Local: `KEYS` processes each send a key's requests back to back for `SECONDS`,
another a person's at `PERSON_PER_SECOND`, on an account quota of `ACCOUNT_PER_MINUTE` a
minute.

Run twice in one go: as shipped (each key's own bucket, then the bucket the account's keys
share, apart from the people's) and, as the baseline, with the keys' shared bucket being
the people's (as before: every caller of an account spent one bucket, each key at most its
share). What the person is refused is the figure.

    PYTHONPATH=layers/shared/python:. .venv/bin/python -m bench.key_quota
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any
from unittest import mock

from bench.support.handler_environment import handler_environment
from bench.support.report import recording_tables, save
from incidents.store import Caller, new_id
from incidents.table import TABLE_SCHEMA
from lambdas.http.principal import context_of
from lambdas.routes import ROUTES
from local.api.proxy_events import LocalLambdaContext, proxy_event
from local.engines.clients import create_table, use_local_credentials
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

ACCOUNT_PER_MINUTE = 600
SECONDS = 30.0
PERSON_PER_SECOND = 2.0
KEYS = 2
LAYOUTS = ("shipped", "shared")
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
        for layout in LAYOUTS:
            spawn = multiprocessing.get_context("spawn")  # forked, they'd share our sockets
            with ProcessPoolExecutor(
                KEYS + 1, mp_context=spawn, initializer=_container, initargs=(environment, layout)
            ) as pool:
                runs.append(side_by_side(pool, layout))
    report({"runs": runs, "engine": engine.description})


def _container(environment: dict[str, str], layout: str) -> None:
    os.environ.update(environment)
    from lambdas import incident_queries  # noqa: PLC0415 - reads the environment set above
    from lambdas.http import admission, quotas  # noqa: PLC0415

    if layout == "shared":  # the baseline: the keys' second take is the people's bucket
        limits = quotas.quotas()
        shared = dataclasses.replace(limits, api_keys=limits.api)
        mock.patch.object(admission, "API_KEYS_QUOTA", admission.API_QUOTA).start()
        mock.patch.object(admission, "quotas", return_value=shared).start()  # for the process
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


def side_by_side(pool: ProcessPoolExecutor, layout: str) -> dict[str, Any]:
    """`KEYS` keys looping and a person at their pace, in one account, for `SECONDS`."""
    account = new_id("acct")
    keys = [context_of(Caller(account, new_id("key")), ["incidents:read"]) for _ in range(KEYS)]
    person = context_of(Caller(account, new_id("user")))
    start = time.monotonic() + 5.0  # every process up and imported
    jobs = [("key", key, 0.0, start) for key in keys]
    jobs.append(("person", person, 1 / PERSON_PER_SECOND, start))
    *key_statuses, person_statuses = pool.map(_loop, jobs)
    return {
        "layout": layout,
        "keys": dict(Counter(status for statuses in key_statuses for status in statuses)),
        "person": dict(Counter(person_statuses)),
    }


def report(results: dict[str, Any]) -> None:
    with recording_tables():
        print(
            f"{KEYS} API keys looping for {SECONDS:.0f} s beside a person at "
            f"{PERSON_PER_SECOND:.0f} "
            f"requests a second, one account at {ACCOUNT_PER_MINUTE} a minute, "
            f"{results['engine']}:"
        )
        print()
        print("| keys' buckets | keys: 200 | keys: 429 | person: 200 | person: 429 |")
        print("|---|---:|---:|---:|---:|")
        for run in results["runs"]:
            key, person = run["keys"], run["person"]
            label = (
                "each its own, then one the keys share (shipped)"
                if run["layout"] == "shipped"
                else "each its own, then the people's (baseline)"
            )
            print(
                f"| {label} | {key.get(200, 0)} | {key.get(429, 0)} "
                f"| {person.get(200, 0)} | {person.get(429, 0)} |"
            )
        print(f"written to {save('key_quota', json.loads(json.dumps(results, default=str)))}")


if __name__ == "__main__":
    main()
