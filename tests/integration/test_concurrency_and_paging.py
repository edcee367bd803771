"""Races between updates and new participants, and paging "My Teams' Incidents" to the end."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import pytest

from incidents.errors import VersionConflictError
from incidents.incident.commands import get_incident, update_incident
from incidents.incident.create import create_incident
from incidents.incident.participants import add_participant
from incidents.models import Role, Severity
from incidents.requests import AddParticipant, CreateIncident, UpdateIncident
from incidents.store import Caller, build_store, new_id
from tests.helpers.api_harness import Api
from tests.helpers.people import new_api_user, new_user

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration


def retrying(action: Callable[[], object]) -> None:
    for _ in range(50):
        try:
            action()
        except VersionConflictError:
            continue
        return
    raise AssertionError("never got through")


class SlowTransactions:
    """The real client, but each transaction waits a moment first: this widens the window
    between a participant's read of the summary and its write, where an update can land."""

    def __init__(self, client: DynamoDBClient, delay: float) -> None:
        self._client = client
        self._delay = delay

    def transact_write_items(self, **request: Any) -> Any:
        time.sleep(self._delay)
        return self._client.transact_write_items(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_updates_racing_new_participants_leave_no_stale_copy(
    dynamodb: DynamoDBClient, table_name: str
) -> None:
    slow = cast("DynamoDBClient", SlowTransactions(dynamodb, delay=0.03))
    store = build_store(slow, table_name, b"s" * 32, max_workers=4)
    alice = Caller(new_id("acct"), new_id("user"))
    incidents = [
        create_incident(store, alice, CreateIncident(title=f"i{n}")).summary.id for n in range(2)
    ]
    severities = list(Severity)
    for round_ in range(8):
        with ThreadPoolExecutor(4) as pool:
            futures = [
                pool.submit(
                    retrying,
                    partial(
                        update_incident,
                        store,
                        alice,
                        incident_id,
                        UpdateIncident(title=f"r{round_}", severity=severities[round_ % 5]),
                    ),
                )
                for incident_id in incidents
            ] + [
                pool.submit(
                    retrying,
                    partial(
                        add_participant,
                        store,
                        alice,
                        incident_id,
                        AddParticipant(
                            participant_id=new_user(store, alice.account_id), role=Role.RESPONDER
                        ),
                    ),
                )
                for incident_id in incidents
            ]
            for future in futures:
                future.result()
        for incident_id in incidents:
            incident = get_incident(store, alice, incident_id)
            assert len(incident.participants) == 2 + round_
            assert incident.summary.version == 2 + round_
            stale = [
                p.participant_id for p in incident.participants if p.incident != incident.summary
            ]
            assert stale == [], f"round {round_}: copies behind version {incident.summary.version}"
    store.engine.close()


def test_my_teams_incidents_pages_to_the_end_each_incident_once(api: Api) -> None:
    rng = random.Random(11)
    account = new_id("acct")
    creator, me = new_api_user(api, account), new_api_user(api, account)
    teams = [api.call("create_team", creator, body={"name": f"T{n}"}).body["id"] for n in range(3)]
    for team in teams:
        assert (
            api.call("add_member", creator, {"team_id": team}, body={"user_id": me.user_id}).status
            == 201
        )
    other_team = api.call("create_team", creator, body={"name": "not mine"}).body["id"]
    expected = []
    for n in range(45):
        chosen = rng.sample(teams, rng.randint(1, 3))
        body = {"title": f"incident {n}", "teams": chosen}
        created = api.call("create_incident", creator, body=body).body["summary"]
        expected.append((created["created_at"], created["id"]))
    api.call("create_incident", creator, body={"title": "elsewhere", "teams": [other_team]})
    expected_ids = [incident_id for _, incident_id in sorted(expected, reverse=True)]

    seen: list[str] = []
    cursor: str | None = None
    for _ in range(100):
        query = {"limit": [str(rng.randint(1, 12))]}
        if cursor:
            query["cursor"] = [cursor]
        page = api.call("my_teams_incidents", me, query=query)
        assert page.status == 200, page.body
        seen += [item["id"] for item in page.body["items"]]
        cursor = page.body["next_cursor"]
        if not page.body["has_more"]:
            break
    assert seen == expected_ids
