"""Cold start: CPU time to import each handler in a fresh interpreter, as Lambda's init does.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.cold_start``).
Each figure is the median of `RUNS` fresh interpreters, CPU time (``time.process_time``) of
the handler's import alone (the interpreter's own start-up is not counted), with the dev
stage's function environment from ``cdk.json`` and the variables Lambda sets
(``LAMBDA_TASK_ROOT``, ``AWS_LAMBDA_FUNCTION_NAME``, ...), so Powertools' Tracer is on and
the X-Ray SDK loads as in the cloud. The baseline, measured the same way in the same run,
is ``import boto3``: the floor of any Python function that talks to DynamoDB.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench.report import save
from lambdas.routes import Group
from stacks.config import stage_config

RUNS = 9
TARGET_MS = 350
ROOT = Path(__file__).resolve().parents[1]
PROBE = "import time; t = time.process_time(); import {module}; print(time.process_time() - t)"


def lambda_environment() -> dict[str, str]:
    """What a deployed function of the dev stage sees (ARNs and names are placeholders)."""
    stages = json.loads((ROOT / "cdk.json").read_text())["context"]["stages"]
    return {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": f"{ROOT / 'layers' / 'shared' / 'python'}{os.pathsep}{ROOT}",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "LAMBDA_TASK_ROOT": "/var/task",
        "AWS_LAMBDA_FUNCTION_NAME": "incidents-dev",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "TABLE_NAME": "incidents-dev",
        "CURSOR_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:cursor",
        "POWERTOOLS_SERVICE_NAME": "incidents",
        "POWERTOOLS_METRICS_NAMESPACE": "Incidents",
        **stage_config("dev", stages).lambda_environment(),
    }


def import_ms(module: str, env: dict[str, str]) -> float:
    """Median CPU milliseconds of importing `module` in `RUNS` fresh interpreters."""
    samples = []
    for _ in range(RUNS):
        output = subprocess.run(
            [sys.executable, "-c", PROBE.format(module=module)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        samples.append(float(output) * 1000)
    return statistics.median(samples)


def main() -> None:
    """Measure every handler and the baseline; print and save the table."""
    env = lambda_environment()
    baseline = import_ms("boto3", env)
    results = {"import boto3 (baseline)": baseline}
    results |= {
        f"lambdas.{group.value}": import_ms(f"lambdas.{group.value}", env) for group in Group
    }
    print(f"handler import, CPU ms, median of {RUNS} fresh interpreters (target <= {TARGET_MS})")
    for name, value in results.items():
        verdict = "" if "baseline" in name else ("  ok" if value <= TARGET_MS else "  OVER")
        print(f"{name:<34}{value:8.0f}{value / baseline:8.2f}x{verdict}")
    print(f"written to {save('cold_start', {'runs': RUNS, 'target_ms': TARGET_MS, 'ms': results})}")


if __name__ == "__main__":
    main()
