"""A strict TypeScript client, as a front-end team would write one: types generated from the
served ``/openapi.json`` by openapi-typescript, calls through openapi-fetch (both pinned in
``package.json``), compiled with ``tsc --strict`` and no casts, then run against the local
API: create with a retried key, get by id and by number, If-None-Match, page to the end,
filters, If-Match from the ETag, participants, a note, resolve, teams, and each error status
read as the typed error body. ``loose_spots.ts`` holds ``@ts-expect-error`` lines that
compile only while the document stays exact (an error code outside the enum, a text incident
number, a 409 on ``GET /me/teams``…)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SOURCES = Path(__file__).resolve().parent / "typescript"
BIN = ROOT / "node_modules" / ".bin"


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def compiled(local_api: LocalApi, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program and the assertions, compiled against types generated from the served
    document (a copy beside the project's node_modules, so the tree stays clean)."""
    work = tmp_path_factory.mktemp("typescript")
    for source in SOURCES.iterdir():
        shutil.copy(source, work / source.name)
    (work / "node_modules").symlink_to(ROOT / "node_modules")
    status, document = local_api.request("GET", "/openapi.json")
    assert status == 200
    (work / "openapi.json").write_text(json.dumps(document))
    (work / "generated").mkdir()
    run([str(BIN / "openapi-typescript"), "openapi.json", "-o", "generated/api.d.ts"], work)
    shutil.copy(work / "generated" / "api.d.ts", work / "api.d.ts")  # as the docs' example has it
    (work / "receiver_example.ts").write_text(documented_receiver())
    run([str(BIN / "tsc"), "-p", "."], work)  # strict; a @ts-expect-error that compiles fails
    return work


def documented_receiver() -> str:
    """The TypeScript receiver of docs/events.md, as printed."""
    (block,) = re.findall(r"```typescript\n(.*?)```", (ROOT / "docs/events.md").read_text(), re.S)
    return str(block)


def test_the_documented_typescript_receiver_verifies_a_delivery(compiled: Path) -> None:
    """docs/events.md's receiver, compiled strictly against the generated types, run: it
    answers a signed delivery 204 and prints its note, an unsigned one 401."""
    secret = "whsec_" + base64.b64encode(b"k" * 24).decode()
    source = (compiled / "build" / "receiver_example.js").read_text()
    (compiled / "build" / "receiver_example.js").write_text(source.replace("whsec_…", secret))
    server = subprocess.Popen(
        ["node", "build/receiver_example.js"], cwd=compiled, stdout=subprocess.PIPE, text=True
    )
    try:
        body = json.dumps({"type": "note.added", "timestamp": "2026-11-24T08:41:07Z", "data": {
            "account_id": "acct_x", "incident": None,
            "event": {"type": "note.added", "note": {"text": "Rolled back 4812"}}}})  # fmt: skip
        signed = Webhook(secret).sign("evt_1", datetime.now(UTC), body)
        headers = {"webhook-id": "evt_1", "webhook-signature": signed,
                   "webhook-timestamp": str(int(time.time()))}  # fmt: skip
        assert post_when_listening(body, headers) == 204
        assert post_when_listening(body, {**headers, "webhook-signature": "v1,bad"}) == 401
    finally:
        server.terminate()
        printed, _ = server.communicate(timeout=10)
    assert "evt_1 Rolled back 4812" in printed


def post_when_listening(body: str, headers: dict[str, str]) -> int:
    """POST `body` to the example's port 9000, once it listens; the status."""
    deadline = time.monotonic() + 10
    while True:
        request = urllib.request.Request("http://127.0.0.1:9000/hooks", body.encode(), headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return error.code
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_the_workflow_through_a_strict_typescript_client(
    local_api: LocalApi, compiled: Path
) -> None:
    output = run(["node", "build/workflow.js"], compiled, local_api.variables)
    summary = json.loads(output.strip().splitlines()[-1])
    assert len(summary["checks"]) == 25, summary
    assert summary["seen"] > 0


def test_the_loose_spots_are_type_errors(compiled: Path) -> None:
    """Compiling proved each ``@ts-expect-error`` line is an error; that the file holds them
    is checked here, so an emptied file cannot pass."""
    assertions = (compiled / "loose_spots.ts").read_text().count("@ts-expect-error")
    assert assertions >= 12
    assert (compiled / "build" / "loose_spots.js").exists()


def test_every_delivered_body_is_read_through_the_generated_types(
    compiled: Path, delivered_bodies: list[dict[str, Any]]
) -> None:
    """``webhooks.ts`` reads each kind through its own fields (a field a body lacks throws)."""
    (compiled / "bodies.json").write_text(json.dumps(delivered_bodies))
    output = run(["node", "build/webhooks.js", "bodies.json"], compiled)
    read = json.loads(output.strip().splitlines()[-1])
    assert read["read"] == len(delivered_bodies)
    assert any(line.startswith("note.added: Rolled back deploy 4812") for line in read["lines"])
    assert any(
        line.startswith("incident.updated: Payload types, all of them SEV1")
        for line in read["lines"]
    )
