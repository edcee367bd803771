"""Team commands and team-scoped queries with botocore's Stubber: the failure paths."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from botocore.stub import Stubber

from incidents.errors import ConflictError, ForbiddenError, NotFoundError
from incidents.incident.queries import my_teams_incidents
from incidents.models import State
from incidents.paging import PageRequest
from incidents.requests import AddMember
from incidents.store import Caller, Store, build_store, new_id
from incidents.team_commands import add_member, require_member

CALLER = Caller(new_id("acct"), new_id("user"))
TEAM = new_id("team")


@pytest.fixture
def stubbed() -> Iterator[tuple[Store, Stubber]]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    store = build_store(client, "tbl", b"k" * 32, max_workers=1)
    with Stubber(client) as stubber:
        yield store, stubber
        stubber.assert_no_pending_responses()
    store.engine.close()


def membership(team: str) -> dict[str, dict[str, str]]:
    return {
        "team_id": {"S": team},
        "user_id": {"S": CALLER.user_id},
        "added_at": {"S": "2026-11-23T06:00:00.000000Z"},
    }


@pytest.mark.parametrize(
    ("reasons", "error"),
    [
        (["ConditionalCheckFailed", "None"], ConflictError),
        (["None", "ConditionalCheckFailed"], NotFoundError),
    ],
)
def test_add_member_maps_each_cancellation_reason(
    stubbed: tuple[Store, Stubber], reasons: list[str], error: type[Exception]
) -> None:
    store, stubber = stubbed
    stubber.add_response("get_item", {"Item": membership(TEAM)})
    team = {"PK": {"S": "t"}, "SK": {"S": TEAM}, "member_count": {"N": "1"}}
    stubber.add_response("get_item", {"Item": team})  # the count the transaction moves
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        modeled_fields={"CancellationReasons": [{"Code": code} for code in reasons]},
    )
    with pytest.raises(error):
        add_member(store, CALLER, TEAM, AddMember(user_id=new_id("user")))


def test_non_member_of_an_existing_team_is_forbidden(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response("get_item", {})
    stubber.add_response("get_item", {"Item": {"PK": {"S": "x"}, "SK": {"S": TEAM}}})
    with pytest.raises(ForbiddenError):
        require_member(store, CALLER, TEAM)


def test_unknown_team_is_not_found(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response("get_item", {})
    stubber.add_response("get_item", {})
    with pytest.raises(NotFoundError):
        require_member(store, CALLER, TEAM)


def test_naming_a_foreign_team_is_forbidden_before_any_fan_out(
    stubbed: tuple[Store, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_response("query", {"Items": [membership(TEAM)]})
    foreign = new_id("team")
    with pytest.raises(ForbiddenError, match=foreign):
        my_teams_incidents(store, CALLER, State.OPEN, PageRequest(), team_ids=[TEAM, foreign])


def test_no_teams_is_an_empty_page_without_queries(stubbed: tuple[Store, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response("query", {"Items": []})
    page = my_teams_incidents(store, CALLER, State.OPEN, PageRequest())
    assert (page.items, page.next_cursor, page.has_more) == ([], None, False)
