"""Incident services with botocore's Stubber: the failure paths a real server rarely shows
(conditional failures, transaction cancellation reasons, throttling)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from dynashard import GrowthPolicy
from dynashard.resharding import ShardMeta
from incidents.errors import (
    NotFoundError,
    PreconditionFailedError,
    ThrottledError,
    VersionConflictError,
)
from incidents.incident.commands import update_incident
from incidents.incident.create import create_incident
from incidents.incident.participants import CHANGE_ATTEMPTS, add_participant
from incidents.items import to_item
from incidents.keys import ShardConfig, participant_meta, summary_key
from incidents.models import IncidentSummary, Role, Severity, Status
from incidents.requests import AddParticipant, CreateIncident, UpdateIncident
from incidents.store import Caller, Store, build_store, new_id
from incidents.tenant_shards import Family

CALLER = Caller(new_id("acct"), new_id("user"))
SUMMARY = IncidentSummary(
    id=new_id("inc"),
    number=7,
    title="t",
    status=Status.TRIGGERED,
    severity=Severity.SEV2,
    created_by=CALLER.user_id,
    created_at="2026-11-23T06:00:00.000000Z",
    updated_at="2026-11-23T06:00:00.000000Z",
    version=3,
)


@pytest.fixture
def stubbed() -> Iterator[tuple[Store, Stubber]]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    store = build_store(
        client,
        "tbl",
        b"k" * 32,
        max_workers=1,
        participant_policy=GrowthPolicy(max_jitter_seconds=0),
    )
    store.clock = lambda: datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
    for family in Family:  # the account's maps, as if read a moment ago
        count = family.stage_count(store.config)
        stored = ShardMeta.initial(family.meta_key(CALLER.account_id), count).stored_now()
        store.shards.counts(family).remember(stored)
    with Stubber(client) as stubber:
        yield store, stubber
        stubber.assert_no_pending_responses()
    store.engine.close()


def summary_item() -> dict[str, Any]:
    pk, sk = summary_key(CALLER.account_id, SUMMARY.id, ShardConfig().summary_shards)
    return to_item(SUMMARY, "incident", {"PK": pk, "SK": sk})


def cancelled(stubber: Stubber, *codes: str) -> None:
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        modeled_fields={"CancellationReasons": [{"Code": code} for code in codes]},
    )


def moved_on() -> dict[str, Any]:
    """The summary as another update left it (version 4)."""
    return to_item(SUMMARY.model_copy(update={"version": 4}), "incident", {"PK": "p", "SK": "s"})


def test_update_losing_a_race_without_if_match_is_a_version_conflict(
    stubbed: tuple[Store, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_response("get_item", {"Item": summary_item()})
    cancelled(stubber, "ConditionalCheckFailed", "None", "None")
    stubber.add_response("get_item", {"Item": moved_on()})  # who won: another update
    with pytest.raises(VersionConflictError):
        update_incident(store, CALLER, SUMMARY.id, UpdateIncident(title="x"))


def test_update_losing_a_race_with_if_match_is_412(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response("get_item", {"Item": summary_item()})
    cancelled(stubber, "ConditionalCheckFailed", "None", "None")
    stubber.add_response("get_item", {"Item": moved_on()})
    with pytest.raises(PreconditionFailedError):
        update_incident(store, CALLER, SUMMARY.id, UpdateIncident(title="x"), if_match=3)


def test_update_losing_to_a_note_or_participant_tries_again(
    stubbed: tuple[Store, Stubber],
) -> None:
    """Only the event counter moved (same version): the update is not the client's problem."""
    store, stubber = stubbed
    stubber.add_response("get_item", {"Item": summary_item()})
    cancelled(stubber, "ConditionalCheckFailed", "None", "None")
    stubber.add_response("get_item", {"Item": summary_item()})  # still version 3
    stubber.add_response("get_item", {"Item": summary_item()})  # the second try reads again
    stubber.add_response("transact_write_items", {})
    stubber.add_response("query", {"Items": []})
    updated = update_incident(store, CALLER, SUMMARY.id, UpdateIncident(title="x"), if_match=3)
    assert (updated.version, updated.title) == (4, "x")


def test_an_update_that_changes_nothing_writes_nothing(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response("get_item", {"Item": summary_item()})
    same = update_incident(store, CALLER, SUMMARY.id, UpdateIncident(severity=SUMMARY.severity))
    assert same == SUMMARY


def copy_at(user: str, version: int) -> dict[str, Any]:
    return {"PK": {"S": "p"}, "SK": {"S": user}, "incident_version": {"N": str(version)}}


def test_update_refreshes_copies_in_one_transaction_dropping_newer_ones(
    stubbed: tuple[Store, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_response("get_item", {"Item": summary_item()})
    stubber.add_response("transact_write_items", {})
    copies = [copy_at("user_a", 3), copy_at("user_b", 3), copy_at("user_c", 5)]
    stubber.add_response("query", {"Items": copies})
    # user_c is already newer: not even sent. user_b moved on meanwhile: dropped, then again.
    cancelled(stubber, "None", "ConditionalCheckFailed")
    stubber.add_response("transact_write_items", {})
    updated = update_incident(store, CALLER, SUMMARY.id, UpdateIncident(severity=Severity.SEV1))
    assert (updated.version, updated.severity) == (4, Severity.SEV1)
    stubber.assert_no_pending_responses()


def test_an_update_whose_refresh_fails_still_answers_with_the_committed_summary(
    stubbed: tuple[Store, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_response("get_item", {"Item": summary_item()})
    stubber.add_response("transact_write_items", {})
    stubber.add_response("query", {"Items": [copy_at("user_a", 3)]})
    stubber.add_client_error("transact_write_items", service_error_code="InternalServerError")
    updated = update_incident(store, CALLER, SUMMARY.id, UpdateIncident(severity=Severity.SEV1))
    assert updated.version == 4


def expect_create_reads(stubber: Stubber, participants: int) -> None:
    stubber.add_response("update_item", {"Attributes": {"value": {"N": "8"}}})  # its number
    for _ in range(participants):
        stubber.add_response("get_item", {})  # no shard metadata: default count


def test_create_with_an_unknown_team_names_it(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    team = new_id("team")
    expect_create_reads(stubber, participants=2)
    # summary, details, creator's and team's copies, created event, the team's check
    cancelled(stubber, "None", "None", "None", "None", "None", "ConditionalCheckFailed")
    with pytest.raises(NotFoundError, match=team):
        create_incident(store, CALLER, CreateIncident(title="t", teams=[team]))


def test_create_throttled_inside_the_transaction_is_429(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    expect_create_reads(stubber, participants=1)
    cancelled(stubber, "ThrottlingError", "None", "None")
    for _ in ("summaries", "open"):  # at the stage's maximum: the throttle is stamped
        stubber.add_response("update_item", {})
    with pytest.raises(ThrottledError):
        create_incident(store, CALLER, CreateIncident(title="t"))


def test_create_throttled_on_a_participant_grows_its_shards_and_retries(
    stubbed: tuple[Store, Stubber],
) -> None:
    store, stubber = stubbed
    expect_create_reads(stubber, participants=1)
    cancelled(stubber, "None", "None", "ThrottlingError")
    stubber.add_response("get_item", {})  # consistent re-read before the conditional growth
    stubber.add_response("transact_write_items", {})  # ShardCount 1 -> 2
    stubber.add_response("transact_write_items", {})  # the same number: taken once
    created = create_incident(store, CALLER, CreateIncident(title="t"))
    meta = store.counts.get(participant_meta(CALLER.account_id, CALLER.user_id))
    assert meta.shard_count == 2
    assert created.summary.number == 8


def test_a_create_tried_again_keeps_the_number_it_took(stubbed: tuple[Store, Stubber]) -> None:
    """Its number is one ``ADD`` before the transaction, outside it: a create another write
    conflicted with tries again with the same number, never taking a second."""
    store, stubber = stubbed
    expect_create_reads(stubber, participants=1)
    cancelled(stubber, "TransactionConflict", "None", "None")
    stubber.add_response("transact_write_items", {})
    created = create_incident(store, CALLER, CreateIncident(title="t"))
    assert created.summary.number == 8
    stubber.assert_no_pending_responses()


def expect_cancelled_attempts(stubber: Stubber, attempts: int, *reasons: str) -> None:
    """Add-participant attempts that read the summary and see their transaction cancelled."""
    for attempt in range(attempts):
        stubber.add_response("get_item", {"Item": summary_item()})
        stubber.add_response("get_item", {"Item": {"PK": {"S": "p"}, "SK": {"S": "x"}}})  # a copy
        if attempt == 0:
            stubber.add_response("get_item", {})  # participant's shard metadata (then cached)
        cancelled(stubber, *reasons)


def test_add_participant_retries_when_the_summary_moved(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    user = new_id("user")
    expect_cancelled_attempts(stubber, 2, "None", "ConditionalCheckFailed")
    stubber.add_response("get_item", {"Item": summary_item()})
    stubber.add_response("get_item", {"Item": {"PK": {"S": "p"}, "SK": {"S": "x"}}})
    stubber.add_response("transact_write_items", {})
    copy = {
        "PK": {"S": "p"},
        "SK": {"S": user},
        "participant_id": {"S": user},
        "roles": {"SS": ["responder"]},
        **{f"incident_{k}": v for k, v in summary_item().items() if k not in {"PK", "SK", "Type"}},
    }
    stubber.add_response("get_item", {"Item": copy})
    added = add_participant(
        store, CALLER, SUMMARY.id, AddParticipant(participant_id=user, role=Role.RESPONDER)
    )
    assert added.incident == SUMMARY
    assert added.roles == [Role.RESPONDER]


def test_add_participant_gives_up_after_repeated_conflicts(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    user = new_id("user")
    expect_cancelled_attempts(stubber, CHANGE_ATTEMPTS, "TransactionConflict", "None")
    with pytest.raises(VersionConflictError, match="keeps changing"):
        add_participant(
            store, CALLER, SUMMARY.id, AddParticipant(participant_id=user, role=Role.ASSIGNEE)
        )


def test_an_added_participant_that_cannot_be_read_back_is_still_the_answer(
    stubbed: tuple[Store, Stubber],
) -> None:
    """The transaction committed: a failed read-back must not turn it into a 500."""
    store, stubber = stubbed
    user = new_id("user")
    stubber.add_response("get_item", {"Item": summary_item()})
    stubber.add_response("get_item", {})  # no copy yet: a new participant
    stubber.add_response("get_item", {})  # the participant's shard metadata: default count
    stubber.add_response("get_item", {"Item": {"participants": {"N": "1"}}})  # details' count
    stubber.add_response("transact_write_items", {})
    stubber.add_client_error("get_item", service_error_code="InternalServerError")
    added = add_participant(
        store, CALLER, SUMMARY.id, AddParticipant(participant_id=user, role=Role.RESPONDER)
    )
    assert (added.participant_id, added.roles, added.incident) == (
        user,
        [Role.RESPONDER],
        SUMMARY,
    )
    stubber.assert_no_pending_responses()
