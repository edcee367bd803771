"""Events out under ``make dev``: a webhook registered against the local API, pointing at a
receiver on this machine, gets each change signed within about a second, driven by
DynamoDB Local's stream through the same publisher and sender code as the cloud."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from pathlib import Path

import pytest

from local.api.dev_process import DevProcess, children, dev_process
from local.webhook_receiver import Received, Receiver, serving
from tests.e2e.conftest import LocalApi, receiving
from tests.helpers.deliveries import (
    assert_duplicates_share_their_id,
    assert_ordered_per_incident,
    wait_for,
)

pytestmark = pytest.mark.integration


def test_a_change_reaches_a_local_receiver_signed_within_seconds(local_api: LocalApi) -> None:
    token = local_api.token(1, 0)
    with receiving(local_api, token) as (receiver, hook):
        started = time.time()
        status, created = local_api.request("POST", "/incidents", token, {"title": "Disk full"})
        assert status == 201
        wait_for(lambda: len(receiver.accepted()) >= 1, 10, "a delivery from make dev")
        elapsed = receiver.accepted()[0].at - started
        deliveries = f"/webhooks/{hook['id']}/deliveries"
        wait_for(  # the sender logs the attempt once the receiver has answered it
            lambda: bool(local_api.request("GET", deliveries, token)[1]["items"]),
            10,
            "the delivery logged",
        )
        status, log = local_api.request("GET", deliveries, token)
    delivery = receiver.received[0]
    assert delivery.verified
    assert delivery.body["type"] == "incident.created"
    assert delivery.body["data"]["incident"]["id"] == created["summary"]["id"]
    assert elapsed < 5, f"{elapsed:.2f} s from the create to the delivery"
    assert status == 200
    assert [entry["status"] for entry in log["items"]] == ["succeeded"]


def pipeline_of(running: DevProcess) -> int:
    """The pid of ``make dev``'s event pipeline."""
    (pid,) = [
        child
        for child in children(running.process.pid)
        if b"local.events.event_pipeline" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]
    return pid


KILL_POINTS = {
    "while publishing": (6, False),
    "while delivering": (6, True),
}
"""Where the pipeline is killed: after how many notes written just before, and whether
once some of them were delivered (else at once: still publishing). Killed idle, it goes
through what both do once their work in flight is recovered, so that case is no third."""


@pytest.mark.slow
@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_a_killed_pipeline_is_restarted_and_loses_nothing(
    tmp_path: Path, dynamodb_endpoint: str, point: str
) -> None:
    """Issue 37, point 5: a ``kill -9`` of the event pipeline left it dead (nothing logged,
    the API answering 2xx) and 114 of 158 events never came (it started at the stream's end
    again). ``make dev`` now restarts it, saying so, and it resumes from its checkpoint:
    the notes written before and while it was down arrive, each once, in order."""
    before, some_delivered = KILL_POINTS[point]
    table = f"killed-pipeline-{point.replace(' ', '-')}"
    settings = {"DYNAMODB_ENDPOINT": dynamodb_endpoint, "TABLE_NAME": table,
                "DEMO_INCIDENTS": "10", "DEV_CONCURRENCY": "2"}  # fmt: skip
    receiver = Receiver(secrets=[], answer=after_a_moment)
    with dev_process(tmp_path, settings) as running, serving(receiver) as url:
        api = LocalApi(running.url, table, running.accounts, running.variables)
        token = api.token(0, 0)
        status, hook = api.request("POST", "/webhooks", token, {"url": url})
        assert status == 201, hook
        receiver.secrets.append(hook["secret"])
        status, created = api.request("POST", "/incidents", token, {"title": "Disk full"})
        assert status == 201, created
        wait_for(lambda: len(receiver.accepted()) >= 1, 20, "the first delivery")
        incident = created["summary"]["id"]
        notes = NotesOf(api, token, incident)
        notes.write(before)
        if some_delivered:
            wait_for(lambda: len(seqs(receiver)) >= 3, 20, "some of them delivered")
        killed = pipeline_of(running)
        os.kill(killed, signal.SIGKILL)
        notes.write(3)  # committed while the pipeline is down
        wanted = list(range(1, 2 + notes.written))
        wait_for(lambda: seqs(receiver) == wanted, 60, "every note, once, in order")
        restarted = pipeline_of(running)
        log = running.log_tail(20_000)
    assert restarted != killed
    assert "event pipeline exited (-9); restarting" in log
    assert "event pipeline restarted" in log
    assert_duplicates_share_their_id(receiver.accepted())
    assert_ordered_per_incident(receiver.verified())


def after_a_moment(_: Received) -> int:
    """204 after 50 ms: deliveries still in flight when the pipeline is killed."""
    time.sleep(0.05)
    return 204


@dataclasses.dataclass
class NotesOf:
    """Notes written to one incident through the API."""

    api: LocalApi
    token: str
    incident: str
    written: int = 0

    def write(self, count: int) -> None:
        for _ in range(count):
            path = f"/incidents/{self.incident}/notes"
            status, _ = self.api.request("POST", path, self.token, {"text": f"{self.written}"})
            assert status == 201
            self.written += 1


def seqs(receiver: Receiver) -> list[int]:
    """The events accepted, each once, in the order they first arrived (at least once: a
    delivery in flight when the pipeline died comes again, with its id)."""
    return list(dict.fromkeys(got.body["data"]["event"]["seq"] for got in receiver.accepted()))
