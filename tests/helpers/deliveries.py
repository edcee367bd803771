"""Helpers of the delivery tests: webhooks pointed at local receivers, changes through the
API, and waiting for what arrives."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from incidents.events_out.delivery_messages import DeliveryMessage
from incidents.store import Caller
from local.webhook_receiver import Received, Receiver, out_of_order
from tests.helpers.api_harness import Api


class Sent:
    """The delivery queue and the bus, as the publisher uses them, recorded (each event's
    ``seq``)."""

    def __init__(self) -> None:
        self.queued: list[int] = []
        self.bus: list[int] = []

    def send(self, messages: list[DeliveryMessage]) -> None:
        self.queued += [int(m.seq or 0) for m in messages]

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803
        self.bus += [json.loads(e["Detail"])["data"]["event"]["seq"] for e in Entries]
        return {"FailedEntryCount": 0}


def wait_for(done: Callable[[], bool], seconds: float = 30.0, what: str = "deliveries") -> None:
    """Poll until `done`, or fail saying what did not happen."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(0.05)


def register(api: Api, who: Caller, receiver: Receiver, url: str, **body: object) -> str:
    """A webhook of `who`'s account to `url`; its secret given to `receiver`."""
    created = api.call("create_webhook", who, body={"url": url, **body})
    assert created.status == 201, created.body
    receiver.secrets.append(created.body["secret"])
    return str(created.body["id"])


def new_incident(api: Api, who: Caller, title: str = "DB down") -> str:
    """An incident (its event 1)."""
    reply = api.call("create_incident", who, body={"title": title})
    assert reply.status == 201, reply.body
    return str(reply.body["summary"]["id"])


def add_note(api: Api, who: Caller, incident: str, text: str) -> None:
    """A note (one event)."""
    reply = api.call("add_note", who, {"incident_id": incident}, body={"text": text})
    assert reply.status == 201, reply.body


def event_of(delivery: Received) -> dict[str, object]:
    """The timeline event a delivery carries."""
    event: dict[str, object] = delivery.body["data"]["event"]
    return event


def assert_ordered_per_incident(received: list[Received]) -> None:
    """The contract: seq n+1 of an incident never arrives before seq n was accepted."""
    breaches = out_of_order(received)
    assert breaches == [], f"{breaches} in {[trace(got) for got in received]}"


def trace(got: Received) -> str:
    """One delivery in a failure's message: incident, seq, answer, arrival."""
    event = event_of(got)
    return f"{str(event['incident_id'])[-6:]}#{event['seq']} {got.status} {got.at:.3f}"


def assert_duplicates_share_their_id(received: list[Received]) -> None:
    """At least once: a delivery may come again, always with the same id and body."""
    bodies: dict[str, object] = {}
    for delivery in received:
        assert bodies.setdefault(delivery.webhook_id, delivery.body) == delivery.body
