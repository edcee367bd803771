"""SnapStart (decision 020): what a restore takes off a cold start, and what it still pays.

Reproduce: ``python -m bench.snapstart`` (in ``make bench``; about 20 s).

For each function decision 020 snapshots (the API's handler groups and the authorizer),
median of `RUNS` fresh interpreters under a deployed function's environment
(`local.lambda_environment`: Tracer and the X-Ray SDK load as in the cloud), CPU time
(``time.process_time``) of:

- **init**: importing the handler, which is what Lambda snapshots: a restore skips it;
- **hooks**: the after-restore hooks (`lambdas.snapstart.restored`): a restore adds them;
- **first use**: building the container's DynamoDB client and a store, no request sent:
  what the first request still builds after a restore, as after an init;

and the interpreter's peak resident memory after init (MB), what the snapshot holds of
it. The baseline is ``import boto3`` in the same runs. This is the source tree on this
machine's venv (see `bench.cold_start` for the deployed assets on CPython 3.13): the
ratios to ``import boto3`` are the figures that carry to Lambda's ARM64.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any

from bench.support.report import recording_tables, save
from lambdas.routes import Group
from local.lambda_environment import lambda_environment

RUNS = 3
MODULES = ("lambdas.authorizer", *(f"lambdas.{group.value}" for group in Group))
FIGURES = ("init", "hooks", "first_use", "rss_mb")
PROBE = """
import json, resource, time
t = time.process_time()
import {module}
init = time.process_time() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
from lambdas import runtime, snapstart
t = time.process_time()
snapstart.restored()
hooks = time.process_time() - t
t = time.process_time()
runtime.dynamodb(), runtime.store_without_cursors()
first_use = time.process_time() - t
print(json.dumps({{"init": init * 1000, "hooks": hooks * 1000,
                  "first_use": first_use * 1000, "rss_mb": rss}}))
"""
BASELINE = "import time; t = time.process_time(); import boto3; print(time.process_time() - t)"


def environment() -> dict[str, str]:
    """A deployed function's environment, with credentials that need no lookup."""
    return {
        **lambda_environment(),
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "USER_POOL_ID": "us-east-1_BenchPool1",
        "USER_POOL_CLIENT_ID": "bench-client",
    }


def run(code: str) -> str:
    """What `code` prints in a fresh interpreter under `environment`."""
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment(), capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def measure() -> tuple[float, dict[str, dict[str, float]]]:
    """The baseline's median and each module's median figures, the modules taken in turn
    within each run so that a noisy moment hits them alike."""
    baseline: list[float] = []
    samples: dict[str, list[dict[str, float]]] = {module: [] for module in MODULES}
    for _ in range(RUNS):
        baseline.append(float(run(BASELINE)) * 1000)
        for module in MODULES:
            samples[module].append(json.loads(run(PROBE.format(module=module))))
    medians = {
        module: {f: statistics.median(s[f] for s in runs) for f in FIGURES}
        for module, runs in samples.items()
    }
    return statistics.median(baseline), medians


def main() -> None:
    """Measure, print the table and save the result."""
    boto3_ms, medians = measure()
    with recording_tables():
        print(
            f"CPU ms, median of {RUNS} fresh interpreters; x: the ratio to import boto3 "
            f"({boto3_ms:.0f} ms)\n"
        )
        print("| function | init (a restore skips) | hooks (a restore adds) | first use | MB |")
        print("|---|---:|---:|---:|---:|")
        for module, m in medians.items():
            print(
                f"| `{module}` | {m['init']:.0f}, {m['init'] / boto3_ms:.2f}x "
                f"| {m['hooks']:.2f} | {m['first_use']:.0f} | {m['rss_mb']:.0f} |"
            )
        payload: dict[str, Any] = {"runs": RUNS, "boto3_ms": boto3_ms, "ms": medians}
        print(f"\nwritten to {save('snapstart', payload)}")


if __name__ == "__main__":
    main()
