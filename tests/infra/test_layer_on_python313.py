"""The built layer imports on Python 3.13: what is deployed is what is tested.

The layer is built with the project's own bundling (pip for CPython 3.13, binary wheels
only) for this machine's platform instead of Lambda's ARM64, then every handler is imported
in a fresh 3.13 interpreter with nothing on ``sys.path`` but the synthesized function asset
and the layer (as Lambda has ``/var/task`` and ``/opt/python``; no site-packages), under the
template's environment and the variables Lambda sets.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.cold_start import lambda_environment
from lambdas.routes import Group
from stacks.shared_layer import build_layer
from tests.infra.conftest import Synthesized, function_of


def find_python313() -> str | None:
    """A working ``python3.13``: on PATH, or installed by pyenv."""
    candidates = [shutil.which("python3.13")]
    candidates += [str(p) for p in Path.home().glob(".pyenv/versions/3.13*/bin/python3.13")]
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "--version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    return None


PYTHON313 = find_python313()
pytestmark = pytest.mark.skipif(
    PYTHON313 is None, reason="no python3.13 here (pyenv install 3.13 provides one)"
)
IMPORT_ALL = (
    "import sys; sys.path[:0] = [{task!r}, {opt!r}]\n"
    "import lambdas.incident_commands, lambdas.incident_queries, lambdas.teams\n"
    "import pydantic_core, xxhash\n"
    "print(sys.version_info[:2], all(m.__file__.startswith(({task!r}, {opt!r}))"
    " for m in (lambdas.teams, pydantic_core, xxhash)))"
)


def function_asset(synthesized: Synthesized) -> Path:
    """The staged code asset of the functions (the ``lambdas`` package)."""
    outdir = Path(synthesized.assembly.directory)
    (asset,) = {path.parent.parent for path in outdir.glob("asset.*/lambdas/routes.py")}
    return asset


def test_every_handler_imports_from_the_built_layer_on_python_313(
    dev: Synthesized, tmp_path: Path
) -> None:
    assert PYTHON313 is not None
    layer = build_layer(tmp_path / "layer", f"manylinux2014_{platform.machine()}")
    task = function_asset(dev)
    _, function = function_of(dev, Group.INCIDENT_COMMANDS)
    template_env = {
        name: value
        for name, value in function["Properties"]["Environment"]["Variables"].items()
        if isinstance(value, str)
    }
    env = {**lambda_environment(), **template_env, "PATH": os.environ["PATH"]}
    env.pop("PYTHONPATH")
    code = IMPORT_ALL.format(task=str(task), opt=str(layer))
    done = subprocess.run(
        [PYTHON313, "-S", "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "(3, 13) True"
