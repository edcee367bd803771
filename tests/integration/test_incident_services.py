"""Incident and team services on the embedded server: the happy paths and the rules."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from incidents.errors import (
    ConflictError,
    DetailsTooLargeError,
    ForbiddenError,
    NotFoundError,
    PreconditionFailedError,
    TooManyParticipantsError,
)
from incidents.incident.commands import get_incident, resolve_incident, update_incident
from incidents.incident.create import create_incident
from incidents.incident.participants import add_participant, remove_participant
from incidents.incident.queries import (
    account_incidents,
    my_incidents,
    my_teams_incidents,
    team_incidents,
)
from incidents.models import Role, State, Status
from incidents.paging import PageRequest
from incidents.requests import AddMember, AddParticipant, CreateIncident, CreateTeam, UpdateIncident
from incidents.store import Caller, Store, new_id
from incidents.team_commands import add_member, create_team, remove_member
from tests.helpers.people import new_user

pytestmark = pytest.mark.integration


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def test_create_then_get_returns_summary_details_and_participants(
    store: Store, alice: Caller
) -> None:
    bob = new_user(store, alice.account_id)
    team = create_team(store, alice, CreateTeam(name="SRE"))
    created = create_incident(
        store,
        alice,
        CreateIncident(
            title="DB down", details={"runbook": "x", "n": 1.5}, assignees=[bob], teams=[team.id]
        ),
    )
    fetched = get_incident(store, alice, created.summary.id)
    assert fetched.summary == created.summary
    assert fetched.summary.number == 1
    assert fetched.details == {"runbook": "x", "n": 1.5}
    roles = {p.participant_id: p.roles for p in fetched.participants}
    assert roles == {alice.user_id: [Role.CREATOR], bob: [Role.ASSIGNEE], team.id: [Role.TEAM]}
    second = create_incident(store, alice, CreateIncident(title="again"))
    assert second.summary.number == 2


def test_lists_show_the_incident_to_every_participant(store: Store, alice: Caller) -> None:
    bob = Caller(alice.account_id, new_user(store, alice.account_id))
    team = create_team(store, bob, CreateTeam(name="DBA"))
    created = create_incident(
        store, alice, CreateIncident(title="disk full", teams=[team.id], assignees=[bob.user_id])
    )
    first = PageRequest()
    for page in (
        my_incidents(store, alice, State.OPEN, first),
        my_incidents(store, bob, State.OPEN, first),
        my_teams_incidents(store, bob, State.OPEN, first),
        team_incidents(store, bob, team.id, State.OPEN, first),
        account_incidents(store, alice, State.OPEN, first),
    ):
        assert [s.id for s in page.items] == [created.summary.id]
    assert my_incidents(store, alice, State.CLOSED, first).items == []


def test_update_propagates_to_every_copy_and_moves_state(store: Store, alice: Caller) -> None:
    team = create_team(store, alice, CreateTeam(name="SRE"))
    created = create_incident(store, alice, CreateIncident(title="t", teams=[team.id]))
    incident_id = created.summary.id
    update_incident(store, alice, incident_id, UpdateIncident(title="renamed"), if_match=1)
    resolved = resolve_incident(store, alice, incident_id)
    assert (resolved.version, resolved.status, resolved.state) == (3, Status.RESOLVED, State.CLOSED)
    fetched = get_incident(store, alice, incident_id)
    assert {p.incident for p in fetched.participants} == {resolved}
    assert my_incidents(store, alice, State.OPEN, PageRequest()).items == []
    assert my_incidents(store, alice, State.CLOSED, PageRequest()).items == [resolved]
    assert team_incidents(store, alice, team.id, State.CLOSED, PageRequest()).items == [resolved]
    assert account_incidents(store, alice, State.CLOSED, PageRequest()).items == [resolved]


def test_if_match_with_an_old_version_is_412(store: Store, alice: Caller) -> None:
    created = create_incident(store, alice, CreateIncident(title="t"))
    update_incident(store, alice, created.summary.id, UpdateIncident(title="u"))
    with pytest.raises(PreconditionFailedError):
        update_incident(store, alice, created.summary.id, UpdateIncident(title="v"), if_match=1)


def test_add_and_remove_participants(store: Store, alice: Caller) -> None:
    created = create_incident(store, alice, CreateIncident(title="t"))
    incident_id = created.summary.id
    carol = new_user(store, alice.account_id)
    add_participant(
        store, alice, incident_id, AddParticipant(participant_id=carol, role=Role.RESPONDER)
    )
    added = add_participant(
        store, alice, incident_id, AddParticipant(participant_id=carol, role=Role.ASSIGNEE)
    )
    assert added.roles == [Role.ASSIGNEE, Role.RESPONDER]
    assert added.incident == created.summary
    carol_caller = Caller(alice.account_id, carol)
    assert [s.id for s in my_incidents(store, carol_caller, State.OPEN, PageRequest()).items] == [
        incident_id
    ]
    remove_participant(store, alice, incident_id, carol)
    assert my_incidents(store, carol_caller, State.OPEN, PageRequest()).items == []
    with pytest.raises(NotFoundError):
        remove_participant(store, alice, incident_id, carol)
    with pytest.raises(NotFoundError, match="team"):
        add_participant(
            store, alice, incident_id, AddParticipant(participant_id=new_id("team"), role=Role.TEAM)
        )


def test_errors(store: Store, alice: Caller) -> None:
    with pytest.raises(NotFoundError):
        get_incident(store, alice, new_id("inc"))
    with pytest.raises(NotFoundError, match="team"):
        create_incident(store, alice, CreateIncident(title="t", teams=[new_id("team")]))
    with pytest.raises(DetailsTooLargeError):
        create_incident(store, alice, CreateIncident(title="t", details={"x": "a" * 360_000}))
    with pytest.raises(TooManyParticipantsError):
        create_incident(
            store, alice, CreateIncident(title="t", assignees=[new_id("user") for _ in range(99)])
        )


def test_team_membership_rules(store: Store, alice: Caller) -> None:
    bob = Caller(alice.account_id, new_user(store, alice.account_id))
    team = create_team(store, alice, CreateTeam(name="SRE"))
    with pytest.raises(ForbiddenError):
        team_incidents(store, bob, team.id, State.OPEN, PageRequest())
    with pytest.raises(ForbiddenError):
        my_teams_incidents(store, bob, State.OPEN, PageRequest(), team_ids=[team.id])
    with pytest.raises(ForbiddenError):
        add_member(store, bob, team.id, AddMember(user_id=bob.user_id))
    add_member(store, alice, team.id, AddMember(user_id=bob.user_id))
    with pytest.raises(ConflictError):
        add_member(store, alice, team.id, AddMember(user_id=bob.user_id))
    assert team_incidents(store, bob, team.id, State.OPEN, PageRequest()).items == []
    remove_member(store, bob, team.id, bob.user_id)
    with pytest.raises(ForbiddenError):
        team_incidents(store, bob, team.id, State.OPEN, PageRequest())
    with pytest.raises(NotFoundError):
        team_incidents(store, alice, new_id("team"), State.OPEN, PageRequest())


def test_creates_at_once_take_numbers_without_failing_or_retrying_each_other(
    store: Store, alice: Caller
) -> None:
    """A burst of one account's creates (expiries firing together): one transaction each,
    none refused or tried again over the number, numbers unique and consecutive."""
    create_incident(store, alice, CreateIncident(title="first"))  # the account's maps exist
    transactions: list[str] = []
    hook = "before-call.dynamodb.TransactWriteItems"
    events = store.client.meta.events
    events.register(hook, lambda **_: transactions.append("transaction"), unique_id="burst")
    try:
        with ThreadPoolExecutor(8) as pool:
            created = list(
                pool.map(
                    lambda n: create_incident(store, alice, CreateIncident(title=f"expired {n}")),
                    range(16),
                )
            )
    finally:
        events.unregister(hook, unique_id="burst")
    assert sorted(incident.summary.number for incident in created) == list(range(2, 18))
    assert len(transactions) == 16
