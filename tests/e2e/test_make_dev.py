"""``make dev`` as a newcomer runs it: DynamoDB Local by default, named in the banner, stopped
with Ctrl-C without leaving a JVM, and a kept data directory served again without reseeding."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import signal
import socket
import struct
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from local.api.dev_process import DevProcess, alive, dev_process
from local.engines.dynamodb_local import running_jvms, unavailable_reason
from local.webhook_receiver import Received, Receiver, serving
from tests.helpers.deliveries import (
    assert_duplicates_share_their_id,
    assert_ordered_per_incident,
    wait_for,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        unavailable_reason() is not None, reason=f"DynamoDB Local: {unavailable_reason()}"
    ),
]
STOP_WITHIN = 10.0
DEFAULTS = {"DYNAMODB_BACKEND": "", "DYNAMODB_ENDPOINT": "", "DEMO_INCIDENTS": "30"}


def call(running: DevProcess, method: str, path: str, body: object = None) -> dict[str, object]:
    """JSON answer of one request as the first user of the first account."""
    token = running.accounts[0]["users"][0]["token"]
    request = urllib.request.Request(
        running.url + path,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Authorization": token, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, object] = json.loads(response.read())
        return answer


def hang_up_mid_response(running: DevProcess) -> None:
    """Ask for a large page, then reset the connection without reading the answer."""
    token = running.accounts[0]["users"][0]["token"]
    port = int(running.url.rsplit(":", 1)[1])
    for _ in range(5):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                f"GET /incidents?state=CLOSED&limit=100 HTTP/1.1\r\nHost: x\r\n"
                f"Authorization: {token}\r\n\r\n".encode()
            )
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    time.sleep(1)


def listening(port: int) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses something listens on at TCP `port` (Linux ``/proc/net``); an
    IPv4-mapped IPv6 one as its IPv4 address."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            hex_address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                raw = bytes.fromhex(hex_address)  # each 32-bit word in the host's order
                words = b"".join(raw[at : at + 4][::-1] for at in range(0, len(raw), 4))
                address = ipaddress.ip_address(words)
                mapped = getattr(address, "ipv4_mapped", None)
                found.add(mapped or address)
    return found


def jvm_port(pid: int) -> int:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return int(argv[argv.index("-port") + 1])


def test_make_dev_serves_on_dynamodb_local_and_ctrl_c_ends_the_jvm(tmp_path: Path) -> None:
    """Also: DynamoDB Local listens on the loopback address only (it takes any credentials),
    and "started" is printed once a worker has loaded and would answer, not before."""
    with dev_process(tmp_path, DEFAULTS) as running:
        log = running.log_tail(100_000)
        assert "DynamoDB: AWS DynamoDB Local" in log
        assert log.index("cold start") < log.index("started in"), log
        jvms = running_jvms(parent=running.process.pid)
        assert len(jvms) == 1, "local.dev started its own DynamoDB Local"
        assert listening(jvm_port(jvms[0])) == {ipaddress.ip_address("127.0.0.1")}
        listed = call(running, "GET", "/me/teams/incidents?state=OPEN&limit=25")
        assert listed["items"]
        call(running, "POST", "/incidents", {"title": "first command"})  # every group once
        call(running, "GET", "/me/teams")
        assert "Warning" not in running.log_tail(100_000), "no warning on first requests"
        hang_up_mid_response(running)
        assert "Traceback" not in running.log_tail(100_000), "a client hanging up is normal"
        assert running.interrupt() == 0, running.log_tail()
    assert not set(jvms) & set(running_jvms())


def test_a_kept_data_directory_is_served_again_without_reseeding(tmp_path: Path) -> None:
    settings = {**DEFAULTS, "DYNAMODB_DATA_DIR": str(tmp_path / "data")}
    with dev_process(tmp_path / "first", settings) as running:
        created = call(running, "POST", "/incidents", {"title": "kept across restarts"})
        assert running.interrupt() == 0
    with dev_process(tmp_path / "second", settings) as running:
        assert "seeding" not in running.log_tail(), "the complete demo data was reused"
        summary = created["summary"]
        assert isinstance(summary, dict)
        again = call(running, "GET", f"/incidents/{summary['id']}")
        assert again["summary"] == summary
        later = call(running, "POST", "/incidents", {"title": "numbered after it"})
        assert isinstance(later["summary"], dict)
        assert later["summary"]["number"] == summary["number"] + 1
        assert running.interrupt() == 0


@pytest.mark.timing
def test_ctrl_c_under_load_stops_promptly_and_quietly(tmp_path: Path) -> None:
    """16 clients keep fan-out pages in flight; one Ctrl-C must end everything within
    `STOP_WITHIN` seconds, with exit code 0 and no traceback (it took over 30 s before)."""
    with dev_process(tmp_path, {**DEFAULTS, "DEMO_INCIDENTS": "300"}) as running:
        served = threading.Semaphore(0)
        stop = threading.Event()

        def client() -> None:
            while not stop.is_set():
                with contextlib.suppress(OSError):
                    call(running, "GET", "/incidents?state=CLOSED&limit=100")
                    served.release()

        threads = [threading.Thread(target=client, daemon=True) for _ in range(16)]
        for thread in threads:
            thread.start()
        for _ in range(50):  # a deterministic amount of load before the interrupt
            assert served.acquire(timeout=60)
        started = time.monotonic()
        code = running.interrupt()
        elapsed = time.monotonic() - started
        stop.set()
        log = running.log_tail(100_000)
    assert code == 0, log[-3000:]
    assert elapsed < STOP_WITHIN, f"stopped after {elapsed:.1f} s"
    assert "Traceback" not in log, log[-3000:]
    assert log.rstrip().endswith("stopped")


def test_make_dev_killed_with_a_data_directory_loses_no_committed_event(tmp_path: Path) -> None:
    """Issue 37, point 5: a ``kill -9`` of ``make dev`` with ``DYNAMODB_DATA_DIR`` lost the
    deliveries queued in its last moments (the queue lived in memory: seq 7-13 of 21 never
    came). Notes are written up to the instant of the kill; after a restart on the same
    directory every event the table holds arrives, once per id, in order.

    DynamoDB Local itself may drop the last write it acknowledged before a ``kill -9`` (its
    store is not flushed at once: measured, the last of 50 transactions); the timeline read
    after the restart is what was committed, and at most that one is missing from it."""
    settings = {**DEFAULTS, "DYNAMODB_DATA_DIR": str(tmp_path / "data"), "DEMO_INCIDENTS": "4"}
    receiver = Receiver(secrets=[], answer=slowly)  # deliveries still queued at the kill
    with serving(receiver) as url:
        with dev_process(tmp_path / "first", settings) as running:
            hook = call(running, "POST", "/webhooks", {"url": url})
            receiver.secrets.append(str(hook["secret"]))
            created = call(running, "POST", "/incidents", {"title": "written up to the kill"})
            summary = created["summary"]
            assert isinstance(summary, dict)
            for n in range(NOTES):
                call(running, "POST", f"/incidents/{summary['id']}/notes", {"text": f"{n}"})
            helpers = running.helpers()
            running.interrupt(signal.SIGKILL)
        wait_for(lambda: not any(map(alive, helpers)), 30, "make dev's helpers to die with it")
        with dev_process(tmp_path / "second", settings) as running:
            timeline = call(running, "GET", f"/incidents/{summary['id']}/timeline?limit=50")
            events = timeline["items"]
            assert isinstance(events, list)
            committed = [event["seq"] for event in events]
            wait_for(lambda: delivered_seqs(receiver) == committed, 60, "every committed event")
            assert "messages kept from the last run" in running.log_tail(50_000)
            assert running.interrupt() == 0
    assert len(committed) >= NOTES, "DynamoDB Local dropped more than its last write"
    assert_duplicates_share_their_id(receiver.accepted())
    assert_ordered_per_incident(receiver.verified())


NOTES = 20


def slowly(_: Received) -> int:
    """A receiver's answer: 204 after 0.2 s."""
    time.sleep(0.2)
    return 204


def delivered_seqs(receiver: Receiver) -> list[int]:
    """The events accepted, each once, in the order they first arrived."""
    return list(dict.fromkeys(got.body["data"]["event"]["seq"] for got in receiver.accepted()))
