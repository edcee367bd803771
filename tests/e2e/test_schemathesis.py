"""Schemathesis against the served OpenAPI document, every phase, several seeds.

The CLI runs the examples, coverage, fuzzing and stateful phases (the stateful one follows
the document's links: create, then get/update/participants; list, then its next page) with
every check (`schemathesis.toml` beside this file says which few are tuned, and why): no
server error, no schema-valid request rejected, no response that does not match the
document or does not deserialize. ``make test`` runs a fixed budget that fits CI (the
deterministic phases once, fuzzing and stateful per seed); ``make fuzz`` the same with many
more examples (``FUZZ_EXAMPLES``, ``FUZZ_SEEDS``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lambdas.routes import ROUTES
from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration
CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "5"))
SEEDS = [int(seed) for seed in os.environ.get("FUZZ_SEEDS", "20261123,1").split(",")]
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def phases(seed: int) -> str:
    """Every phase with the first seed; with the others only the phases a seed changes
    (the examples and coverage phases are the document's, the same for every seed)."""
    return "examples,coverage,fuzzing,stateful" if seed == SEEDS[0] else "fuzzing,stateful"


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_every_phase_finds_nothing(local_api: LocalApi, seed: int, tmp_path: Path) -> None:
    run = subprocess.run(
        [
            str(SCHEMATHESIS),
            "--config-file",
            str(CONFIG),
            "run",
            f"{local_api.url}/openapi.json",
            "--header",
            f"Authorization: {local_api.token(1, 0)}",  # the first account's demo data, its
            # webhook included (which Swagger UI's test executes), stays as make dev made it
            "--seed",
            str(seed),
            "--max-examples",
            str(EXAMPLES),
            "--phases",
            phases(seed),
            "--report-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=900,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]
    generated = re.search(r"(\d+) generated, (\d+) passed", output)
    assert generated, output[-3000:]
    assert int(generated.group(1)) == int(generated.group(2)) >= len(ROUTES) * EXAMPLES
    assert "Stateful" in output
    assert f"Selected: {len(ROUTES)}/{len(ROUTES)}" in output
