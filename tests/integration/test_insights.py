"""Insights (MTTA and MTTR per team, severity and day) on DynamoDB Local, through the API
and the publisher's path, on a simulated clock: what each life of an incident counts,
counted once whatever the stream repeats, history counted by the backfill, and every
figure of random lives equal to the one computed from their timelines (counts and means
exact, quantiles within the sketch's relative accuracy)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from incidents.events_out.insights_backfill import backfill_account
from incidents.events_out.outbox import BatchReads, Publisher, outgoing_from_item
from incidents.events_out.publish_order import PublishRaceError, count_insights
from incidents.insights.aggregates import RELATIVE_ACCURACY
from incidents.insights.progress import Progress, counted
from incidents.keys import published_key
from incidents.models import parse_timestamp
from incidents.store import Caller, new_id
from incidents.timeline.events import event_from_item
from incidents.timeline.queries import stored_events
from lambdas import runtime
from tests.helpers.api_harness import Api
from tests.helpers.clock import WallClock
from tests.helpers.deliveries import Sent
from tests.helpers.models import against_a_model

pytestmark = pytest.mark.integration
T0 = datetime(2027, 3, 1, 22, 0, tzinfo=UTC)
"""Two hours before midnight: lives cross into the next day."""
DAY1, DAY2 = "2027-03-01", "2027-03-02"


@dataclass
class World:
    api: Api
    alice: Caller
    clock: WallClock
    teams: list[str]
    incidents: list[str] = field(default_factory=list)

    def call(self, name: str, path: dict[str, str] | None = None, **kwargs: Any) -> Any:
        reply = self.api.call(name, self.alice, path, **kwargs)
        assert reply.status < 300, (name, reply.status, reply.body)
        return reply.body

    def create(self, severity: str = "SEV2", teams: tuple[str, ...] = (), status: str = "") -> str:
        body: dict[str, Any] = {"title": "db down", "severity": severity, "teams": list(teams)}
        if status:
            body["status"] = status
        incident: str = self.call("create_incident", body=body)["summary"]["id"]
        self.incidents.append(incident)
        return incident

    def change(self, incident: str, **body: str) -> None:
        self.call("update_incident", {"incident_id": incident}, body=body)

    def insights(self, **query: str) -> dict[str, Any]:
        asked = {"from": DAY1, "until": DAY2, **query}
        body: dict[str, Any] = self.call(
            "incident_insights", query={k: [v] for k, v in asked.items()}
        )
        return body

    def row(self, day: str = DAY1, **query: str) -> dict[str, Any]:
        rows: dict[str, dict[str, Any]] = {
            row["range_start"]: row for row in self.insights(**query)["items"]
        }
        return rows[day]


def publish(world: World, *, reverse: bool = False) -> None:
    """Every event of the world's incidents through the publisher, as the stream would (in
    `reverse`: the latest first, the publisher filling the gap before it; a concurrent
    publisher's move is retried with a fresh batch, as the stream retries)."""
    store = runtime.store()
    for incident in world.incidents:
        items = stored_events(store, world.alice.account_id, incident, 1)
        items = items[::-1] if reverse else items
        for _ in range(5):
            try:
                publisher, batch = Publisher(store, Sent(), Sent(), "bus"), BatchReads()  # type: ignore[arg-type]
                for item in items:
                    publisher.publish(outgoing_from_item(item), batch)
                break
            except PublishRaceError:
                continue


def new_world(api: Api) -> World:
    """A fresh account with two teams, its clock at `T0`."""
    alice = Caller(new_id("acct"), new_id("user"))
    assert api.call("save_profile", alice, body={"name": "Alice"}).status == 200
    teams = [
        api.call("create_team", alice, body={"name": name}).body["id"]
        for name in ("Payments", "Search")
    ]
    clock = WallClock(T0)
    runtime.store().clock = clock
    return World(api, alice, clock, teams)


@pytest.fixture
def world(api: Api, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setattr(runtime.store(), "clock", runtime.store().clock)  # put back after
    return new_world(api)


def test_an_incidents_life_files_each_figure_under_its_severity_and_teams_then(
    world: World,
) -> None:
    payments, search = world.teams
    incident = world.create("SEV2", teams=(payments,))
    world.clock.advance(120)
    world.change(incident, status="ACKNOWLEDGED")
    world.clock.advance(80)
    world.call(
        "add_participant",
        {"incident_id": incident},
        body={"participant_id": search, "role": "team"},
    )
    world.change(incident, severity="SEV1")
    world.clock.advance(400)
    world.call("resolve_incident", {"incident_id": incident})
    publish(world)

    everything = world.row()
    assert everything["total_incident_count"] == 1
    assert everything["mean_seconds_to_first_ack"] == pytest.approx(120)
    assert everything["mean_seconds_to_resolve"] == pytest.approx(600)
    assert everything["p50_seconds_to_resolve"] == pytest.approx(600, rel=RELATIVE_ACCURACY)
    assert everything["total_incidents_resolved_unacknowledged"] == 0
    sev2, sev1 = world.row(severity="SEV2"), world.row(severity="SEV1")
    assert (sev2["total_incident_count"], sev2["total_incidents_acknowledged"]) == (1, 1)
    assert (sev2["total_incidents_resolved"], sev1["total_incidents_resolved"]) == (0, 1)
    assert sev1["total_incident_count"] == 0  # opened as SEV2
    joined = world.row(team=search)
    assert (joined["total_incident_count"], joined["total_incidents_resolved"]) == (0, 1)
    assert world.row(team=payments)["total_incidents_resolved"] == 1


def test_resolved_without_acknowledge_reopened_and_created_acknowledged(world: World) -> None:
    quiet = world.create("SEV3")
    world.clock.advance(300)
    world.change(quiet, status="TRIGGERED")  # changes nothing: no event
    world.call("resolve_incident", {"incident_id": quiet})
    world.clock.advance(100)
    world.change(quiet, status="TRIGGERED")  # reopened
    world.clock.advance(100)
    world.change(quiet, status="ACKNOWLEDGED")  # its first acknowledge, 500 s in
    world.call("resolve_incident", {"incident_id": quiet})  # not a second resolve
    eager = world.create("SEV3", status="ACKNOWLEDGED")  # acknowledged at once: 0 s
    world.change(eager, status="TRIGGERED")
    world.change(eager, status="ACKNOWLEDGED")  # not a first acknowledge
    publish(world)

    row = world.row()
    assert row["total_incident_count"] == 2
    assert row["total_incidents_resolved"] == 1
    assert row["total_incidents_resolved_unacknowledged"] == 1
    assert row["total_incidents_reopened"] == 1
    assert row["total_incidents_acknowledged"] == 2
    assert row["mean_seconds_to_first_ack"] == pytest.approx(250)
    assert row["p50_seconds_to_first_ack"] == 0
    assert row["mean_seconds_to_resolve"] == pytest.approx(300)


def test_the_streams_repeats_count_once_and_other_accounts_see_nothing(
    world: World, api: Api
) -> None:
    incident = world.create("SEV1")
    world.clock.advance(60)
    world.call("resolve_incident", {"incident_id": incident})
    publish(world, reverse=True)  # the resolve first: its gap is filled from the table
    for _ in range(2):  # the stream hands a batch over again after a failure
        publish(world)
    assert world.row()["total_incident_count"] == 1
    assert world.row()["total_incidents_resolved"] == 1
    bob = Caller(new_id("acct"), new_id("user"))
    query = {"from": [DAY1], "until": [DAY1]}
    theirs = api.call("incident_insights", bob, query=query).body["items"][0]
    assert theirs["total_incident_count"] == 0


def test_the_backfill_counts_history_once_and_the_stream_goes_on_from_it(world: World) -> None:
    store = runtime.store()
    old = world.create("SEV2")
    world.clock.advance(90)
    world.change(old, status="ACKNOWLEDGED")
    account = world.alice.account_id
    store.client.put_item(  # published before insights existed: a position, no progress
        TableName=store.table_name,
        Item={
            "PK": {"S": published_key(account, old)[0]},
            "SK": {"S": published_key(account, old)[1]},
            "seq": {"N": "2"},
        },
    )
    world.clock.advance(30)
    world.call("resolve_incident", {"incident_id": old})
    publish(world)  # event 3 alone: history it never saw, so nothing yet
    assert world.row()["total_incident_count"] == 0

    assert backfill_account(store, account) == 3  # opened, acknowledged, resolved
    assert backfill_account(store, account) == 0
    publish(world)
    row = world.row()
    assert (row["total_incident_count"], row["total_incidents_resolved"]) == (1, 1)
    assert row["mean_seconds_to_resolve"] == pytest.approx(120)
    world.clock.advance(10)
    world.change(old, status="TRIGGERED")  # the stream goes on where the backfill stopped
    publish(world)
    assert world.row()["total_incidents_reopened"] == 1


def test_a_count_moved_since_it_was_read_is_read_again(world: World) -> None:
    """The backfill and the publisher race on an incident's count: the one that read it
    before the other moved it fails its condition and adds nothing."""
    incident = world.create("SEV2")
    publish(world)
    store, account = runtime.store(), world.alice.account_id
    stale = Progress()  # as read before the publisher counted event 1
    first = event_from_item(stored_events(store, account, incident, 1, 1)[0])
    _, figures = counted(stale, [first])
    with pytest.raises(PublishRaceError):
        count_insights(store, account, incident, stale, now=Progress(1), figures=figures)
    assert world.row()["total_incident_count"] == 1


def test_periods_weeks_and_months_and_bad_ranges(world: World, api: Api) -> None:
    world.create("SEV4")
    publish(world)
    weeks = world.insights(granularity="week", **{"from": "2027-02-20", "until": "2027-03-10"})
    starts = [row["range_start"] for row in weeks["items"]]
    assert starts == ["2027-02-20", "2027-02-22", "2027-03-01", "2027-03-08"]
    assert [row["total_incident_count"] for row in weeks["items"]] == [0, 0, 1, 0]
    months = world.insights(granularity="month", **{"from": "2027-02-15", "until": "2027-03-31"})
    assert [(r["range_start"], r["range_end"]) for r in months["items"]] == [
        ("2027-02-15", "2027-02-28"),
        ("2027-03-01", "2027-03-31"),
    ]
    for query, word in [
        ({"from": "2027-03-02", "until": "2027-03-01"}, "before"),
        ({"from": "2026-01-01", "until": "2027-03-01"}, "366"),
        ({"from": "2027-02-30"}, "calendar"),
        ({"from": "yesterday"}, "from"),
        ({"granularity": "hour"}, "granularity"),
    ]:
        reply = api.call("incident_insights", world.alice, query={k: [v] for k, v in query.items()})
        assert reply.status == 400, (query, reply.body)
        assert word in reply.body["message"], reply.body


ACTIONS = ("ack", "resolve", "trigger", "sev1", "sev3", "join", "leave")
LIVES = st.lists(
    st.tuples(
        st.sampled_from(("TRIGGERED", "TRIGGERED", "ACKNOWLEDGED")),
        st.lists(st.tuples(st.integers(0, 5400), st.sampled_from(ACTIONS)), min_size=3, max_size=8),
    ),
    min_size=2,
    max_size=4,
)


@against_a_model(max_examples=4)
@given(lives=LIVES)
def test_every_insight_equals_the_figure_its_timelines_give(
    world: World, lives: list[tuple[str, list[tuple[int, str]]]]
) -> None:
    world = new_world(world.api)  # each example its own account, from T0
    payments, search = world.teams
    for status, steps in lives:
        incident = world.create("SEV2", teams=(payments,), status=status)
        for pause, action in steps:
            world.clock.advance(pause)
            _act(world, incident, action, search)
        world.clock.advance(1800)
    publish(world)
    timelines = [
        world.call("incident_timeline", {"incident_id": incident}, query={"limit": ["100"]})[
            "items"
        ]
        for incident in world.incidents
    ]
    for team in (None, payments, search):
        for severity in (None, "SEV1", "SEV2", "SEV3"):
            query = {"team": team, "severity": severity}
            asked = {k: v for k, v in query.items() if v}
            rows = world.insights(**asked)["items"]
            for row in rows:
                wanted = expected(timelines, row["range_start"], team, severity)
                assert_matches(row, wanted, asked)


def _act(world: World, incident: str, action: str, joining: str) -> None:
    path = {"incident_id": incident}
    if action == "join":
        world.call("add_participant", path, body={"participant_id": joining, "role": "team"})
    elif action == "leave":
        reply = world.api.call(
            "remove_participant", world.alice, {**path, "participant_id": joining}
        )
        assert reply.status in (204, 404), reply.body
    elif action.startswith("sev"):
        world.change(incident, severity=action.upper())
    else:
        status = {"ack": "ACKNOWLEDGED", "resolve": "RESOLVED", "trigger": "TRIGGERED"}[action]
        world.change(incident, status=status)


@dataclass
class Expected:
    """One row's figures, computed from the timelines alone."""

    counts: dict[str, int] = field(default_factory=dict)
    ack: list[float] = field(default_factory=list)
    resolve: list[float] = field(default_factory=list)

    def count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1


def expected(
    timelines: list[list[dict[str, Any]]], day: str, team: str | None, severity: str | None
) -> Expected:
    """The row's figures: each incident created on `day`, each figure where it was taken."""
    wanted = Expected()
    for events in timelines:
        if parse_timestamp(events[0]["incident"]["created_at"]).date().isoformat() == day:
            Followed(events[0], team, severity, wanted).follow(events)
    return wanted


class Followed:
    """One incident's timeline read event by event, counting into `wanted` the figures
    taken while it had `team` and `severity` (None: any)."""

    def __init__(
        self, created: dict[str, Any], team: str | None, severity: str | None, wanted: Expected
    ) -> None:
        first = created["incident"]
        self.created = parse_timestamp(first["created_at"])
        self.severity = first["severity"]
        self.teams = [p["participant_id"] for p in created["participants"] if p["role"] == "team"]
        self.acked = self.resolved = self.reopened = False
        self.asked = (team, severity)
        self.wanted = wanted

    def fits(self) -> bool:
        team, severity = self.asked
        return (team is None or team in self.teams) and severity in (None, self.severity)

    def take(self, name: str, values: list[float] | None = None, seconds: float = 0) -> None:
        if self.fits():
            self.wanted.count(name)
            if values is not None:
                values.append(seconds)

    def follow(self, events: list[dict[str, Any]]) -> None:
        self.take("total_incident_count")
        self.status("TRIGGERED", events[0]["incident"]["status"], self.created, timeout=False)
        for event in events[1:]:
            if event["type"].startswith("participant.") and event["participant"]["role"] == "team":
                moved = event["participant"]["participant_id"]
                self.teams = [t for t in self.teams if t != moved]
                if event["type"] == "participant.added":
                    self.teams.append(moved)
            changes = event.get("changes") or {}
            if changes.get("severity"):
                self.severity = changes["severity"]["to"]
            if changes.get("status"):
                at, timeout = parse_timestamp(event["at"]), event.get("timeout") is not None
                self.status(changes["status"]["from"], changes["status"]["to"], at, timeout=timeout)

    def status(self, was: str, now: str, at: datetime, *, timeout: bool) -> None:
        seconds = (at - self.created).total_seconds()
        if was == "RESOLVED" and now != "RESOLVED" and not self.reopened:
            self.reopened = True
            self.take("total_incidents_reopened")
        if now == "ACKNOWLEDGED" and not self.acked:
            self.acked = True
            self.take("total_incidents_acknowledged", self.wanted.ack, seconds)
        if now == "RESOLVED" and not self.resolved:
            self.resolved = True
            self.take("total_incidents_resolved", self.wanted.resolve, seconds)
            if not self.acked:
                self.take("total_incidents_resolved_unacknowledged")
            if timeout:
                self.take("total_incidents_auto_resolved")


def assert_matches(row: dict[str, Any], wanted: Expected, asked: dict[str, str]) -> None:
    where = (row["range_start"], asked)
    for name in (
        "total_incident_count",
        "total_incidents_acknowledged",
        "total_incidents_resolved",
        "total_incidents_resolved_unacknowledged",
        "total_incidents_auto_resolved",
        "total_incidents_reopened",
    ):
        assert row[name] == wanted.counts.get(name, 0), (name, where)
    for values, suffix in ((wanted.ack, "first_ack"), (wanted.resolve, "resolve")):
        if not values:
            assert row[f"mean_seconds_to_{suffix}"] is None, where
            continue
        assert row[f"mean_seconds_to_{suffix}"] == pytest.approx(sum(values) / len(values))
        ordered = sorted(values)
        for q in (50, 90, 99):
            exact = ordered[math.ceil(q * len(ordered) / 100) - 1]  # nearest rank
            got = row[f"p{q}_seconds_to_{suffix}"]
            assert abs(got - exact) <= RELATIVE_ACCURACY * exact + 1e-9, (q, suffix, where)
