"""Exactness of the filtered lists on DynamoDB Local and on moto: random incidents (status,
severity, creation time, teams), random filters (window, statuses, severities, both orders,
pages of 1-100) on the caller's, the teams' and the account's lists, walked to the end and
compared with the filtered ground truth: no gap, repeat or misorder, and a partial page
ends the list."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynashard import GrowthPolicy
from incidents.incident.create import new_summary
from incidents.incident.queries import account_incidents, my_incidents, my_teams_incidents
from incidents.models import (
    Severity,
    State,
    Status,
    state_of,
    timestamp,
)
from incidents.paging import CreatedWindow, IncidentFilter, PageRequest
from incidents.requests import CreateIncident, CreateTeam
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.team_commands import create_team
from local.demo.data import START, created_items, write_batches
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, MOTO, Engine, backend_from_env

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ENGINES = [DYNAMODB_LOCAL, MOTO] if backend_from_env() == DYNAMODB_LOCAL else [MOTO]


@pytest.fixture(scope="module", params=ENGINES)
def client(request: pytest.FixtureRequest, engine: Engine, moto_endpoint: str) -> DynamoDBClient:
    """The session's engine, then moto: the property runs on both."""
    endpoint = engine.endpoint if request.param == engine.backend else moto_endpoint
    return local_client(endpoint, max_pool_connections=32)


LISTS = {"mine": my_incidents, "teams": my_teams_incidents, "account": account_incidents}


@dataclass(frozen=True)
class Drawn:
    status: Status
    severity: Severity
    minute: int
    teams: tuple[int, ...]


incidents = st.lists(
    st.builds(
        Drawn,
        st.sampled_from(list(Status)),
        st.sampled_from(list(Severity)),
        st.integers(0, 10_000),
        st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True).map(tuple),
    ),
    max_size=40,
    unique_by=lambda d: d.minute,
)


def seed(store: Store, caller: Caller, drawn: list[Drawn], teams: list[str]) -> list[str]:
    """The drawn incidents, written as a create writes them; their ids in drawn order."""
    items, ids = [], []
    for n, d in enumerate(drawn):
        at = timestamp(START + timedelta(minutes=d.minute))
        request = CreateIncident(title=f"i{n}", status=d.status, severity=d.severity)
        summary = new_summary(caller, n + 1, request, at)
        items += created_items(store, caller, summary, [teams[t] for t in d.teams])
        ids.append(summary.id)
    write_batches(store, items)
    return ids


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=incidents, data=st.data())
def test_filtered_walks_are_the_filtered_ground_truth(
    client: DynamoDBClient, drawn: list[Drawn], data: st.DataObject
) -> None:
    table = f"test-{uuid.uuid4().hex[:12]}"
    create_table(client, TABLE_SCHEMA, table)  # one an example: moto's Query scans it all
    store = build_store(
        client, table, b"test-cursor-secret-" * 2, participant_policy=GrowthPolicy(default_count=4)
    )
    try:
        walk_and_compare(store, drawn, data)
    finally:
        store.engine.close()
        client.delete_table(TableName=table)


def walk_and_compare(store: Store, drawn: list[Drawn], data: st.DataObject) -> None:
    """Seed `drawn`, draw a filter and a list, walk it and compare with the ground truth."""
    caller = Caller(new_id("acct"), new_id("user"))
    teams = [create_team(store, caller, CreateTeam(name=f"T{n}")).id for n in range(3)]
    ids = seed(store, caller, drawn, teams)
    state = data.draw(st.sampled_from(list(State)))
    in_state = [s for s in Status if state_of(s) is state]
    statuses = tuple(data.draw(st.lists(st.sampled_from(in_state), unique=True)))
    severities = tuple(data.draw(st.lists(st.sampled_from(list(Severity)), unique=True)))
    edges = sorted({d.minute for d in drawn} | {0, 10_001})
    since = data.draw(st.none() | st.sampled_from(edges))
    later = [e for e in [*edges, 10_002] if since is None or e > since]
    until = data.draw(st.none() | st.sampled_from(later))
    descending = data.draw(st.booleans())
    limit = data.draw(st.integers(1, 100))
    name = data.draw(st.sampled_from(sorted(LISTS)))

    def instant(minute: int | None) -> datetime | None:
        return None if minute is None else START + timedelta(minutes=minute)

    def kept(d: Drawn) -> bool:
        return (
            state_of(d.status) is state
            and (not statuses or d.status in statuses)
            and (not severities or d.severity in severities)
            and (since is None or d.minute >= since)
            and (until is None or d.minute < until)
        )

    truth = sorted((d.minute, i) for d, i in zip(drawn, ids, strict=True) if kept(d))
    expected = [i for _, i in (truth[::-1] if descending else truth)]
    request = PageRequest(
        limit,
        descending=descending,
        window=CreatedWindow(instant(since), instant(until)),
        filter=IncidentFilter(statuses, severities),
    )
    walked: list[str] = []
    for _ in range(200):
        page = LISTS[name](store, caller, state, request)
        walked += [incident.id for incident in page.items]
        assert page.has_more == (len(walked) < len(expected)), "has_more is exact"
        if not page.has_more:
            break
        request = PageRequest(
            limit,
            page.next_cursor,
            descending=descending,
            window=request.window,
            filter=request.filter,
        )
    assert walked == expected
