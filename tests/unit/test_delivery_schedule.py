"""The retry schedule promised in the docs, and the bound on a delivery's body."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from incidents.events_out.delivery_messages import DeliveryMessage
from incidents.events_out.outbox import outgoing
from incidents.events_out.payloads import MAX_BODY_BYTES
from incidents.events_out.sender import MAX_DELAY, RETRY_DELAYS, retry_delay
from incidents.models import (
    EVENTS,
    NOTE_MAX_CHARACTERS,
    TITLE_MAX,
    EventType,
    IncidentSummary,
    Note,
    Participation,
    Role,
    Severity,
    Status,
    TimelineEvent,
)
from incidents.timeline.events import created_event

HOURS = 3600
ACCOUNT = "acct_" + "D" * 27


@settings(max_examples=200)
@given(st.integers(min_value=0, max_value=2**32))
def test_retries_last_at_least_72_hours_and_each_wait_fits_sqs(seed: int) -> None:
    rng = random.Random(seed)
    waits = [retry_delay(n, rng) for n in range(1, len(RETRY_DELAYS) + 1)]
    assert sum(waits) >= 72 * HOURS
    assert sum(waits) <= 90 * HOURS
    assert all(0 < wait <= MAX_DELAY for wait in waits)


def test_the_schedule_grows_then_holds_at_twelve_hours() -> None:
    assert list(RETRY_DELAYS) == sorted(RETRY_DELAYS)
    assert RETRY_DELAYS[0] == 5
    assert RETRY_DELAYS[-1] == MAX_DELAY == 12 * HOURS
    assert len(RETRY_DELAYS) + 1 == 16


def summary(title: str) -> IncidentSummary:
    return IncidentSummary(
        id="inc_" + "A" * 27,
        number=1,
        title=title,
        status=Status.TRIGGERED,
        severity=Severity.SEV1,
        created_by="user_" + "B" * 27,
        created_at="2026-11-24T08:00:00.000000Z",
        updated_at="2026-11-24T08:00:00.000000Z",
        version=1,
    )


def event() -> TimelineEvent:
    return EVENTS.validate_python(
        {
            "id": "evt_" + "C" * 27,
            "incident_id": "inc_" + "A" * 27,
            "seq": 2,
            "type": EventType.NOTE_ADDED,
            "at": "2026-11-24T08:00:01.000000Z",
            "actor": {"user_id": "user_" + "B" * 27},
            "version": 1,
            "note": {"text": "n"},
        }
    )


def test_a_body_carries_the_event_and_the_summary_after_it() -> None:
    body = json.loads(outgoing(ACCOUNT, event(), summary("DB down")).body)
    assert body["type"] == "note.added"
    assert body["timestamp"] == "2026-11-24T08:00:01.000000Z"
    assert body["data"]["incident"]["title"] == "DB down"
    assert body["data"]["event"]["note"] == {"text": "n"}
    assert set(body["data"]) == {"account_id", "event", "incident"}


def test_the_largest_body_the_models_allow_is_far_under_the_bound() -> None:
    """Issue 37, point 7: a 70,000-character note gave a 70,314-byte body. The models bound
    every part now (the note, the title, the created event's participants), so the largest
    body is built here from the worst characters JSON has (4-byte UTF-8, escaped quotes)."""
    worst_title = ("\U0001f525" + '"') * (TITLE_MAX // 2)
    incident = summary(worst_title)
    note = event().model_copy(update={"note": Note(text="\U0001f525" * NOTE_MAX_CHARACTERS)})
    created = created_event(
        incident,
        [
            Participation(participant_id="user_" + f"{n:027d}", roles=list(Role), incident=incident)
            for n in range(100)
        ],
        incident.created_by,
        incident.created_at,
    )
    sizes = [len(outgoing(ACCOUNT, e, incident).body.encode()) for e in (note, created)]
    assert max(sizes) < MAX_BODY_BYTES / 4, sizes


def test_a_note_longer_than_the_api_takes_cannot_be_an_event() -> None:
    with pytest.raises(ValidationError, match="at most 1000 characters"):
        Note(text="n" * 70_000)


def test_each_test_delivery_has_its_own_group_and_an_incident_shares_one() -> None:
    """A test event waited behind an earlier one still failing (its group was the webhook's
    every test); an incident's events share their group, which keeps them in order."""

    def message(event_id: str, incident_id: str | None) -> DeliveryMessage:
        return DeliveryMessage(
            account_id=ACCOUNT, webhook_id="wh_1", event_id=event_id, type=EventType.NOTE_ADDED,
            incident_id=incident_id, seq=None, happened_at="2026-11-24T08:00:00Z", body="{}",
        )  # fmt: skip

    assert message("evt_1", None).group() != message("evt_2", None).group()
    assert message("evt_1", "inc_1").group() == message("evt_2", "inc_1").group()
