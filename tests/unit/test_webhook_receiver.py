"""The suites' webhook receiver keeps only what was sent to it: a delivery to another path on
its port (owed to an earlier receiver the port belonged to) is answered 404 and not kept."""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from standardwebhooks.webhooks import Webhook

from local.webhook_receiver import Receiver, serving

ROOT = Path(__file__).resolve().parents[2]


def post(url: str) -> int:
    request = urllib.request.Request(url, data=b"{}", method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_a_delivery_to_another_path_is_refused_and_not_kept() -> None:
    receiver = Receiver(secrets=[])
    with serving(receiver) as url:
        other = url.rsplit("/", 1)[0] + "/someone-else"
        assert post(other) == 404
        assert receiver.received == []
        assert post(url) == 401  # its own path: kept, and refused for its signature
    assert [got.verified for got in receiver.received] == [False]


def test_receivers_listen_on_paths_of_their_own() -> None:
    first, second = Receiver(secrets=[]), Receiver(secrets=[])
    with serving(first) as one, serving(second) as two:
        assert urlsplit(one).path != urlsplit(two).path


def test_the_command_line_receiver_answers_on_any_path() -> None:
    receiver = Receiver(secrets=[], path=None)
    with serving(receiver) as url:
        assert url.endswith("/hooks")
        assert post(url.replace("/hooks", "/anything")) == 401


def test_the_documented_receiver_command_verifies_a_delivery(tmp_path: Path) -> None:
    """Issue 40, point 5: ``python -m local.webhook_receiver …`` as the README printed it
    failed (``No module named 'standardwebhooks'`` with the system Python, ``No module named
    'incidents'`` with the project's). ``make receiver SECRET=… RECEIVER_PORT=…`` runs it in
    the project's environment; a delivery signed with the secret is answered 2xx."""
    secret = "whsec_" + base64.b64encode(b"s" * 24).decode()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        ["make", "-s", "receiver", f"SECRET={secret}", f"RECEIVER_PORT={port}"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,  # make and the receiver it runs: one group to stop
    )  # fmt: skip
    try:
        body = '{"type":"webhook.test","timestamp":"2026-11-25T00:00:00Z","data":{}}'
        now = datetime.now(UTC)
        headers = {"webhook-id": "evt_1", "webhook-timestamp": str(int(now.timestamp())),
                   "webhook-signature": Webhook(secret).sign("evt_1", now, body),
                   "content-type": "application/json"}  # fmt: skip
        deadline = time.monotonic() + 60
        status = None
        while status is None and time.monotonic() < deadline:
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/hooks", data=body.encode(), headers=headers
                )
                with urllib.request.urlopen(request, timeout=5) as response:
                    status = response.status
            except urllib.error.URLError:
                time.sleep(0.2)  # not listening yet
        assert status is not None, "the receiver never answered"
        assert 200 <= status < 300, status
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert "webhook.test" in output, output
