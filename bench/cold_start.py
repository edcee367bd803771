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
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import aws_cdk as cdk

from app import build
from bench.support.report import save
from lambdas.routes import Group
from local.lambda_environment import lambda_environment
from stacks.bytecode import runtime_python

RUNS = 15
TARGET_MS = 350
ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import sys; sys.path[:0] = {path!r}\n"
    "import time; t = time.process_time(); import {module}; print(time.process_time() - t)"
)


@dataclass(frozen=True)
class Figure:
    """One module's import cost: the median and the best of the runs."""

    median: float
    best: float


MODULES = ("boto3", *(f"lambdas.{group.value}" for group in Group))


def import_ms(command: list[str], path: list[str], env: dict[str, str]) -> dict[str, Figure]:
    """CPU milliseconds of importing each of `MODULES` in `RUNS` fresh interpreters, the
    modules taken in turn within each run so that a noisy moment hits them alike."""
    samples: dict[str, list[float]] = {module: [] for module in MODULES}
    for _ in range(RUNS):
        for module in MODULES:
            output = subprocess.run(
                [*command, "-c", PROBE.format(path=path, module=module)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            samples[module].append(float(output) * 1000)
    return {
        module: Figure(statistics.median(values), min(values)) for module, values in samples.items()
    }


def synthesized_assets(outdir: Path) -> tuple[Path, Path]:
    """The dev stage synthesized into `outdir` with bundling, the layer built for this
    machine: (function asset, layer's ``python/``)."""
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    host = f"manylinux2014_{platform.machine()}"
    app = cdk.App(context={**context, "layerPlatform": host}, outdir=str(outdir))
    build(app)
    app.synth()
    (task,) = {path.parent.parent for path in outdir.glob("asset.*/lambdas/routes.py")}
    (layer,) = {path.parent for path in outdir.glob("asset.*/python/dynashard")}
    return task, layer


def without_bytecode(asset: Path, into: Path) -> Path:
    """A copy of `asset` without its ``__pycache__`` folders (the build as it was)."""
    shutil.copytree(asset, into, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def deployed(task: Path, layer: Path, env: dict[str, str]) -> dict[str, Figure]:
    """CPU ms of each module imported from the assets by a CPython 3.13 that writes nothing."""
    return import_ms([runtime_python(), "-I", "-S", "-B"], [str(task), str(layer)], env)


def main() -> None:
    """Measure every handler and the baseline, deployed and from the source tree."""
    env = lambda_environment()
    source = import_ms([sys.executable], [], env)
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
    print(
        f"handler import, CPU ms, median (best) of {RUNS} fresh interpreters, x the median of "
        f"import boto3 in the same column (target <= {TARGET_MS} deployed)"
    )
    print(f"{'':<28}" + "".join(f"{name:>30}" for name in columns))
    for module in MODULES:
        cells = []
        for figures in columns.values():
            ratio = figures[module].median / figures["boto3"].median
            cells.append(
                f"{figures[module].median:6.0f} ({figures[module].best:4.0f}) {ratio:5.2f}x"
            )
        verdict = ""
        if module != "boto3":
            verdict = "  ok" if compiled[module].median <= TARGET_MS else "  OVER"
        print(f"{module:<28}" + "".join(f"{cell:>30}" for cell in cells) + verdict)
    payload = {
        "runs": RUNS,
        "target_ms": TARGET_MS,
        "ms": {
            name: {m: asdict(f) for m, f in figures.items()} for name, figures in columns.items()
        },
    }
    print(f"written to {save('cold_start', payload)}")


if __name__ == "__main__":
    main()
