"""Every curl example in the README and the API pages runs as printed against ``make dev``'s
demo data, with the variables ``make dev`` prints (``export API=… TOKEN=… TEAM=…``): each
command must succeed (a 4xx or 5xx fails it, curl's ``--fail-with-body``) and answer JSON."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/api.md", "docs/timeline.md"]
SHELL_BLOCK = re.compile(r"```(?:bash|sh)\n(.*?)```", re.DOTALL)
MARK = "-----8<-----"
STRICT_CURL = """
curl() {  # as printed, but a 4xx or 5xx fails the example
  command curl --fail-with-body --show-error "$@"
}
"""


def commands(page: str) -> list[str]:
    """The page's shell commands that call the API: one per logical line (continuations
    joined), ``curl …`` or ``NAME=$(curl …)``."""
    found = []
    for block in SHELL_BLOCK.findall((ROOT / page).read_text()):
        logical = re.sub(r"\|\n", "| ", block.replace("\\\n", " ")).splitlines()
        found += [line for line in logical if re.match(r"^(\w+=\$\()?curl ", line)]
    return found


@pytest.mark.parametrize("page", PAGES)
def test_every_example_runs_as_printed(local_api: LocalApi, page: str) -> None:
    """The page's commands in order, in one shell (``CURSOR=$(…)`` feeds the next one)."""
    examples = commands(page)
    assert len(examples) >= 3, f"{page}: no curl examples found"
    script = STRICT_CURL + "".join(f"echo '{MARK}'\n{command}\n" for command in examples)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env={**os.environ, **local_api.variables},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    outputs = done.stdout.split(MARK + "\n")[1:]
    failed = examples[len(outputs) - 1] if outputs else examples[0]
    assert done.returncode == 0, f"{page}: {failed}\n{outputs[-1:]}\n{done.stderr}"
    assert len(outputs) == len(examples)
    for command, output in zip(examples, outputs, strict=True):
        if not re.match(r"^\w+=", command):
            assert output.startswith(("{", "[")), f"{page}: {command}: {output!r}"


def test_make_dev_prints_the_variables_the_examples_use(local_api: LocalApi) -> None:
    used = {
        name
        for page in PAGES
        for command in commands(page)
        for name in re.findall(r"\$(\w+)", command)
    }
    assigned = {
        match
        for page in PAGES
        for command in commands(page)
        for match in re.findall(r"^(\w+)=", command)
    }
    assert used - assigned <= set(local_api.variables), used - assigned - set(local_api.variables)
