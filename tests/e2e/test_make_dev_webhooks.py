"""Events out under ``make dev``: a webhook registered against the local API, pointing at a
receiver on this machine, gets each change signed within about a second, driven by
DynamoDB Local's stream through the same publisher and sender code as the cloud."""

from __future__ import annotations

import time

import pytest

from local.webhook_receiver import Receiver, serving
from tests.deliveries import wait_for
from tests.e2e.conftest import LocalApi

pytestmark = pytest.mark.integration


def test_a_change_reaches_a_local_receiver_signed_within_seconds(local_api: LocalApi) -> None:
    token = local_api.token(1, 0)
    receiver = Receiver(secrets=[])
    with serving(receiver) as url:
        status, hook = local_api.request("POST", "/webhooks", token, {"url": url})
        assert status == 201, hook
        receiver.secrets.append(hook["secret"])
        started = time.time()
        status, created = local_api.request("POST", "/incidents", token, {"title": "Disk full"})
        assert status == 201
        wait_for(lambda: len(receiver.accepted()) >= 1, 10, "a delivery from make dev")
        elapsed = receiver.accepted()[0].at - started
        status, log = local_api.request("GET", f"/webhooks/{hook['id']}/deliveries", token)
    delivery = receiver.received[0]
    assert delivery.verified
    assert delivery.body["type"] == "incident.created"
    assert delivery.body["data"]["incident"]["id"] == created["summary"]["id"]
    assert elapsed < 5, f"{elapsed:.2f} s from the create to the delivery"
    assert status == 200
    assert [entry["status"] for entry in log["items"]] == ["succeeded"]
