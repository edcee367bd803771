"""Every curl example in the README and the API, timeline, events, alerts, on-call,
insights and schedules pages runs as printed against ``make dev``'s demo data, with the
variables ``make dev`` prints (``export API=… TOKEN=… TEAM=…``): each command must succeed
(a 4xx or 5xx fails it, curl's ``--fail-with-body``) and answer JSON.
The README's receiver line runs as printed too, and prints the test delivery it verified."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import LocalApi
from tests.helpers.deliveries import wait_for

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    "README.md",
    "docs/api.md",
    "docs/timeline.md",
    "docs/events.md",
    "docs/alerts.md",
    "docs/on-call.md",
    "docs/insights.md",
    "docs/schedules.md",
]
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


def test_the_readme_receiver_runs_as_printed_and_verifies_the_demo_webhook(
    local_api: LocalApi,
) -> None:
    """Issue 40, point 5: ``python -m local.webhook_receiver …`` failed as written (no module
    named 'standardwebhooks', then 'incidents'), and the README registered the webhook before
    the receiver existed. Now: the README's ``make receiver`` line, then its test delivery."""
    readme = "\n".join(SHELL_BLOCK.findall((ROOT / "README.md").read_text()))
    lines = readme.splitlines()
    (receiver,) = [line.split("#")[0] for line in lines if line.startswith("make receiver")]
    (test,) = [line for line in commands("README.md") if "/webhooks/$WEBHOOK/test" in line]
    env = {**os.environ, **local_api.variables}
    running = subprocess.Popen(
        ["bash", "-c", f"exec {receiver}"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(listening, 60, "the receiver on port 9000")
        sent = subprocess.run(["bash", "-c", STRICT_CURL + test], env=env, check=False,
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        assert sent.returncode == 0, sent.stderr
    finally:
        time.sleep(3)  # the delivery: about a second through the local pipeline
        os.killpg(running.pid, signal.SIGINT)
        printed, _ = running.communicate(timeout=20)
    event_id = json.loads(sent.stdout)["id"]
    assert f"verified {event_id} webhook.test" in printed, printed


def listening() -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", 9000)) == 0


def test_the_examples_incident_is_open_so_the_readme_patch_reopens_nothing(
    local_api: LocalApi,
) -> None:
    """Issue 40, point 5: the README acknowledged incident #1, which the demo had resolved
    (the PATCH silently reopened it); ``$INCIDENT`` is now the first open incident."""
    incident = local_api.variables["INCIDENT"]
    status, got = local_api.request("GET", f"/incidents/{incident}", local_api.token(0, 0))
    assert status == 200
    assert got["summary"]["state"] == "OPEN"
