"""Cold start: CPU time to import each handler in a fresh interpreter, as Lambda's init does.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.cold_start``).

Two figures per handler, median of `RUNS` fresh interpreters, CPU time
(``time.process_time``) of the handler's import alone (the interpreter's start is not
counted), under the dev stage's function environment and the variables Lambda sets
(``LAMBDA_TASK_ROOT``, ...), so Powertools' Tracer is on and the X-Ray SDK loads as in the
cloud:

- **deployed**: the app is synthesized with bundling (the assets `cdk deploy` uploads, built
  for this machine's platform through the ``layerPlatform`` context, since native wheels
  for ARM64 cannot load here), and CPython 3.13 imports from the function asset and the
  layer alone, as Lambda's read-only ``/var/task`` and ``/opt/python``: ``-I -S -B``, no
  site-packages, no bytecode written. Beside it, the same assets with their bytecode
  removed: what the build shipped before it compiled (every module compiled at each start).
- **source tree**: this venv's interpreter importing from the repository with its cached
  bytecode (what the tests import; not what is deployed).

The baseline of each column, measured the same way in the same run, is ``import boto3``:
the floor of any Python function that talks to DynamoDB.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import aws_cdk as cdk

from app import build
from bench.report import save
from lambdas.routes import Group
from stacks.bytecode import runtime_python
from stacks.config import stage_config

RUNS = 9
TARGET_MS = 350
ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import sys; sys.path[:0] = {path!r}\n"
    "import time; t = time.process_time(); import {module}; print(time.process_time() - t)"
)
MODULES = ("boto3", *(f"lambdas.{group.value}" for group in Group))


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


def import_ms(command: list[str], module: str, path: list[str], env: dict[str, str]) -> float:
    """Median CPU milliseconds of importing `module` in `RUNS` fresh interpreters."""
    samples = []
    for _ in range(RUNS):
        output = subprocess.run(
            [*command, "-c", PROBE.format(path=path, module=module)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        samples.append(float(output) * 1000)
    return statistics.median(samples)


def synthesized_assets(outdir: Path) -> tuple[Path, Path]:
    """The dev stage synthesized into `outdir` with bundling, the layer built for this
    machine: (function asset, layer's ``python/``)."""
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    host = f"manylinux2014_{platform.machine()}"
    app = cdk.App(context={**context, "layerPlatform": host}, outdir=str(outdir))
    build(app)
    app.synth()
    (task,) = {path.parent.parent for path in outdir.glob("asset.*/lambdas/api.py")}
    (layer,) = {path.parent for path in outdir.glob("asset.*/python/dynashard")}
    return task, layer


def without_bytecode(asset: Path, into: Path) -> Path:
    """A copy of `asset` without its ``__pycache__`` folders (the build as it was)."""
    shutil.copytree(asset, into, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def deployed(task: Path, layer: Path, env: dict[str, str]) -> dict[str, float]:
    """CPU ms of each module imported from the assets by a CPython 3.13 that writes nothing."""
    command = [runtime_python(), "-I", "-S", "-B"]
    return {module: import_ms(command, module, [str(task), str(layer)], env) for module in MODULES}


def main() -> None:
    """Measure every handler and the baseline, deployed and from the source tree."""
    env = lambda_environment()
    source = {module: import_ms([sys.executable], module, [], env) for module in MODULES}
    deployed_env = {name: value for name, value in env.items() if name != "PYTHONPATH"}
    with tempfile.TemporaryDirectory() as scratch:
        task, layer = synthesized_assets(Path(scratch) / "cdk.out")
        compiled = deployed(task, layer, deployed_env)
        bare = deployed(
            without_bytecode(task, Path(scratch) / "task"),
            without_bytecode(layer, Path(scratch) / "layer"),
            deployed_env,
        )
    columns = {"deployed, no bytecode": bare, "deployed": compiled, "source tree": source}
    print(f"handler import, CPU ms, median of {RUNS} fresh interpreters (target <= {TARGET_MS})")
    print(f"{'':<28}" + "".join(f"{name:>24}" for name in columns))
    for module in MODULES:
        cells = []
        for figures in columns.values():
            ratio = figures[module] / figures["boto3"]
            cells.append(f"{figures[module]:8.0f} ms {ratio:5.2f}x boto3")
        verdict = (
            "" if module == "boto3" else ("  ok" if compiled[module] <= TARGET_MS else "  OVER")
        )
        print(f"{module:<28}" + "".join(f"{cell:>24}" for cell in cells) + verdict)
    payload = {"runs": RUNS, "target_ms": TARGET_MS, "ms": columns}
    print(f"written to {save('cold_start', payload)}")


if __name__ == "__main__":
    main()
