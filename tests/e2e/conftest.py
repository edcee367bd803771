"""The local runtime as `make dev` runs it: a subprocess on a free port, reached over HTTP only.

It uses the test session's embedded DynamoDB (through ``DYNAMODB_ENDPOINT``, the variable
`make dev` offers for an external server), so tests can read the table for ground truth.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from local.clients import free_port

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 180


@dataclass(frozen=True)
class LocalApi:
    """The running local API, its dev tokens and its table."""

    url: str
    table: str
    accounts: list[dict[str, Any]]

    def token(self, account: int, user: int) -> str:
        """Dev token of user `user` of account `account` (user 0 is in every team)."""
        token: str = self.accounts[account]["users"][user]["token"]
        return token

    def user_id(self, account: int, user: int) -> str:
        """Id of user `user` of account `account`."""
        user_id: str = self.accounts[account]["users"][user]["user_id"]
        return user_id

    def request(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """Status and JSON body (None if empty) of one HTTP request."""
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if token:
            all_headers["Authorization"] = token
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers=all_headers
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        return status, json.loads(text) if text else None


@pytest.fixture(scope="session")
def local_api(
    dynamodb_endpoint: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalApi]:
    """``python -m local.dev`` with 150 demo incidents; stopped with Ctrl-C (SIGINT) at the end,
    which must end it cleanly."""
    workdir = tmp_path_factory.mktemp("local-api")
    tokens_file, log = workdir / "tokens.json", workdir / "local-api.log"
    port, table = free_port(), f"e2e-{os.getpid()}"
    env = {
        **os.environ,
        "PORT": str(port),
        "DYNAMODB_ENDPOINT": dynamodb_endpoint,
        "TABLE_NAME": table,
        "DEMO_INCIDENTS": "150",
        "DEV_TOKENS_FILE": str(tokens_file),
        "PYTHONPATH": f"{ROOT / 'layers' / 'shared' / 'python'}{os.pathsep}{ROOT}",
        "CURSOR_SECRET": "e2e-cursor-secret-0123456789abcdef0123",
    }
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "local.dev"], cwd=ROOT, env=env, stdout=output, stderr=output
        )
    url = f"http://127.0.0.1:{port}"
    _wait_until_serving(process, url, tokens_file, log)
    accounts = json.loads(tokens_file.read_text())["accounts"]
    yield LocalApi(url, table, accounts)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0, log.read_text()[-2000:]


def _wait_until_serving(
    process: subprocess.Popen[bytes], url: str, tokens_file: Path, log: Path
) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"local.dev exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        if tokens_file.exists():
            try:
                with urllib.request.urlopen(f"{url}/openapi.json", timeout=5):
                    return
            except OSError:
                pass
        time.sleep(0.5)
    process.kill()
    pytest.fail(f"local.dev did not serve within {STARTUP_SECONDS} s:\n{log.read_text()[-3000:]}")
