"""The retry schedule promised in the docs, and the bound on a delivery's body."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from incidents.events_out.outbox import MAX_BODY_BYTES, outgoing
from incidents.events_out.sender import MAX_DELAY, RETRY_DELAYS, retry_delay
from incidents.models import EventType, IncidentSummary, Note, Severity, Status, TimelineEvent

HOURS = 3600


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
    return TimelineEvent.model_validate(
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
    body = json.loads(outgoing("acct_x", event(), summary("DB down")).body)
    assert body["type"] == "note.added"
    assert body["timestamp"] == "2026-11-24T08:00:01.000000Z"
    assert body["data"]["incident"]["title"] == "DB down"
    assert body["data"]["event"]["note"] == {"text": "n"}
    assert "incident_truncated" not in body["data"]


def test_a_body_over_the_bound_keeps_the_event_and_the_incident_id() -> None:
    huge = summary("x").model_copy(update={"title": "x" * MAX_BODY_BYTES})
    out = outgoing("acct_x", event(), huge)
    body = json.loads(out.body)
    assert len(out.body.encode()) < MAX_BODY_BYTES
    assert body["data"]["incident"] == {"id": huge.id}
    assert body["data"]["incident_truncated"] is True


def test_the_body_bound_is_a_hard_cap_even_for_a_huge_event() -> None:
    """Issue 37, point 7: a 70,000-character note (possible in code) gave 70,314 bytes."""
    huge = event().model_copy(update={"note": Note(text="n" * 70_000)})
    out = outgoing("acct_x", huge, summary("DB down"))
    body = json.loads(out.body)
    assert len(out.body.encode()) <= MAX_BODY_BYTES
    assert body["data"]["event_truncated"] is True
    assert body["data"]["event"]["id"] == huge.id
    assert body["data"]["event"]["seq"] == huge.seq
    assert "note" not in body["data"]["event"]
