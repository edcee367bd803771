"""Order checked against the timeline (issue 37, point 4), on DynamoDB Local: an incident's
events go out in `seq` order whatever order the stream hands them in. Its records fed out
of order, with a gap and with repeats, give seq 1..n once each, in order, to the bus and to
every webhook's queue group; a concurrent publisher's move is a retry, not a skip."""

from __future__ import annotations

import json
from typing import Any

import pytest

from incidents.events_out import outbox
from incidents.events_out.outbox import BatchReads, Outgoing, Publisher, outgoing_from_item
from incidents.events_out.publish_order import (
    Position,
    PublishRaceError,
    advance,
    published_position,
)
from incidents.keys import event_key
from incidents.store import Caller, new_id
from lambdas import runtime
from tests.helpers.api_harness import Api
from tests.helpers.deliveries import Sent, add_note, new_incident

pytestmark = pytest.mark.integration


def stored(account: str, incident: str, seq: int) -> Outgoing:
    item = runtime.store().get(*event_key(account, incident, seq))
    assert item is not None
    return outgoing_from_item(item)


def test_records_out_of_order_with_gaps_and_repeats_go_out_in_order(api: Api) -> None:
    alice = Caller(new_id("acct"), new_id("user"))
    created = api.call("create_webhook", alice, body={"url": "http://127.0.0.1:9/hooks"})
    assert created.status == 201, created.body
    incident = new_incident(api, alice)
    for n in range(5):
        add_note(api, alice, incident, f"note {n}")
    sent = Sent()
    publisher = Publisher(runtime.store(), sent, sent, "bus")  # type: ignore[arg-type]
    batch = BatchReads()
    for seq in (3, 1, 2, 6, 5, 6, 4):  # 3 first: 1 and 2 filled; 6: 4 and 5 filled
        publisher.publish(stored(alice.account_id, incident, seq), batch)
    assert sent.bus == [1, 2, 3, 4, 5, 6]
    assert sent.queued == [1, 2, 3, 4, 5, 6]
    assert published_position(runtime.store(), alice.account_id, incident).seq == 6


def test_a_batch_reads_an_incidents_position_once(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six events of one incident in one stream batch: one read of its position (it was
    read once per event), and still one conditional write per event."""
    alice = Caller(new_id("acct"), new_id("user"))
    incident = new_incident(api, alice)
    for n in range(5):
        add_note(api, alice, incident, f"note {n}")
    reads: list[tuple[Any, ...]] = []

    def counted(*args: Any) -> Position:
        reads.append(args)
        return published_position(*args)

    monkeypatch.setattr(outbox, "published_position", counted)
    sent = Sent()
    publisher = Publisher(runtime.store(), sent, sent, "bus")  # type: ignore[arg-type]
    batch = BatchReads()
    for seq in range(1, 7):
        publisher.publish(stored(alice.account_id, incident, seq), batch)
    assert len(reads) == 1
    assert sent.bus == [1, 2, 3, 4, 5, 6]
    assert published_position(runtime.store(), alice.account_id, incident).seq == 6


def test_a_concurrent_move_is_a_retry_not_a_skip(api: Api) -> None:
    alice = Caller(new_id("acct"), new_id("user"))
    incident = new_incident(api, alice)
    store = runtime.store()
    advance(store, alice.account_id, incident, 1, Position(None))
    with pytest.raises(PublishRaceError):  # another publisher got there
        advance(store, alice.account_id, incident, 2, Position(None))
    with pytest.raises(PublishRaceError):
        advance(store, alice.account_id, incident, 3, Position(2))
    advance(store, alice.account_id, incident, 2, Position(1))
    assert published_position(store, alice.account_id, incident).seq == 2


def test_a_move_whose_answer_was_lost_is_done_not_a_race(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write lands but its answer is lost (a read timeout under load), and the SDK's
    retry is refused by that write's own effect, with no other writer: a second look at
    the position finds it where this move put it, so the move is done (it was a
    `PublishRaceError`, and stream recovery failed the record)."""
    alice = Caller(new_id("acct"), new_id("user"))
    incident = new_incident(api, alice)
    store = runtime.store()
    real = store.client.update_item

    def answer_lost(**request: Any) -> Any:
        real(**request)  # lands; its answer never arrives
        return real(**request)  # the retry: refused by its own condition

    monkeypatch.setattr(store.client, "update_item", answer_lost)
    advance(store, alice.account_id, incident, 1, Position(None))
    assert published_position(store, alice.account_id, incident).seq == 1
    with pytest.raises(PublishRaceError):  # still a race when the position is elsewhere
        advance(store, alice.account_id, incident, 3, Position(2))


def test_a_webhook_body_carries_the_event_as_the_timeline_shows_it(api: Api) -> None:
    """Issue 40, point 2: webhook bodies left null fields out while the API shows them as
    null (a generated client's ``TimelineEvent.from_dict`` failed on 7 of 7 delivered
    events); now `data.event` is the timeline's item, field for field."""
    alice = Caller(new_id("acct"), new_id("user"))
    incident = new_incident(api, alice)
    add_note(api, alice, incident, "rolled back")
    patched = api.call("update_incident", alice, {"incident_id": incident}, body={"title": "x"})
    assert patched.status == 200, patched.body
    listed = api.call("incident_timeline", alice, {"incident_id": incident}).body["items"]
    assert len(listed) == 3
    for shown in listed:
        body = json.loads(stored(alice.account_id, incident, shown["seq"]).body)
        assert body["data"]["event"] == shown
