"""Filtered lists: what a filtered page costs, beside what the key-design alternatives cost.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.filters``).
On AWS DynamoDB Local, `INCIDENTS` open incidents (statuses half triggered, half
acknowledged; severities weighted so that SEV1 is 1 %, SEV1-SEV2 10 % and SEV1-SEV3 50 %)
are listed newest first, pages of 25, `PAGES` pages, with the handlers' 200-unit budget, in
three scenarios: the account's list over 16 and 64 OPEN shards, and "my teams" over `TEAMS`
teams of 4 participant shards each (team rates log-normal, one incident in seven on two
teams). Per filter:

- *filter*: the list with the filter expression (what the API does);
- *sparse index*: the same list over a copy of the data holding only the matching incidents,
  read unfiltered: what an index keyed by exactly the filter (a sparse GSI, or the filter
  value in the key) pays, reading only matching items. It is the oracle: "x oracle" divides
  the filter's RCU an item by it;

and once, unfiltered, *severity in the key*: one key range a severity on every shard makes
five times the streams, each holding a fifth (measured at 4 and 8 times, shard counts being
powers of two): what every unfiltered list would pay under that key design.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from bench.support.report import recording_tables, save
from dynashard import GrowthPolicy
from dynashard.keys import WeightedShards
from dynashard.query import PageBudget
from incidents.incident.create import new_summary
from incidents.incident.queries import IncidentPage, account_incidents, my_teams_incidents
from incidents.keys import ShardConfig
from incidents.models import Severity, State, Status, timestamp
from incidents.paging import CreatedWindow, IncidentFilter, PageRequest
from incidents.requests import CreateIncident, CreateTeam
from incidents.store import Caller, Store, build_store, new_id
from incidents.table import TABLE_SCHEMA
from incidents.team_commands import create_team
from local.demo.data import START, created_items, write_batches
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

INCIDENTS = 4000
PAGES = 10
TEAMS = 8
TEAM_SHARDS = 4
SEVERITY_WEIGHTS = [1, 9, 40, 25, 25]
"""SEV1 1 %, SEV1-SEV2 10 %, SEV1-SEV3 50 %."""
SEVERITY_RANGES = (4, 8)
"""Five key ranges a shard, measured between 4 and 8 times the streams (shard counts are
powers of two)."""
MINUTES = 7
TABLE = "bench-filters"
FILTERS: dict[str, IncidentFilter] = {
    "status ACKNOWLEDGED (50 %)": IncidentFilter(statuses=(Status.ACKNOWLEDGED,)),
    "severity SEV1-SEV3 (50 %)": IncidentFilter(
        severities=(Severity.SEV1, Severity.SEV2, Severity.SEV3)
    ),
    "severity SEV1-SEV2 (10 %)": IncidentFilter(severities=(Severity.SEV1, Severity.SEV2)),
    "severity SEV1 (1 %)": IncidentFilter(severities=(Severity.SEV1,)),
}
WINDOWS = {"window 50 %": 0.5, "window 10 %": 0.1, "window 1 %": 0.01}
"""The newest fraction of the incidents, as `since`."""

Lister = Callable[[Store, Caller, State, PageRequest], IncidentPage]


@dataclass(frozen=True)
class Drawn:
    """One incident of the data set, drawn the same way in every copy of it."""

    n: int
    status: Status
    severity: Severity
    teams: tuple[int, ...]

    def matches(self, chosen: IncidentFilter) -> bool:
        return (not chosen.statuses or self.status in chosen.statuses) and (
            not chosen.severities or self.severity in chosen.severities
        )


def drawn_incidents(with_teams: bool) -> list[Drawn]:
    """`INCIDENTS` incidents; with teams, each on one team (one in seven on two), by the
    teams' log-normal rates."""
    rng = random.Random(11)
    rates = [rng.lognormvariate(0, 1) for _ in range(TEAMS)]
    drawn = []
    for n in range(INCIDENTS):
        status = rng.choice([Status.TRIGGERED, Status.ACKNOWLEDGED])
        severity = rng.choices(list(Severity), weights=SEVERITY_WEIGHTS)[0]
        teams: tuple[int, ...] = ()
        if with_teams:
            first = rng.choices(range(TEAMS), weights=rates)[0]
            second = rng.randrange(TEAMS) if rng.random() < 1 / 7 else first
            teams = tuple(sorted({first, second}))
        drawn.append(Drawn(n, status, severity, teams))
    return drawn


def seed(store: Store, caller: Caller, drawn: list[Drawn], teams: list[str]) -> None:
    """`drawn` as a create writes it: the creator's copy, one a team, the summary (the
    account's lists at the scenario's counts, as a grown tenant's)."""
    store.shards.ensure_maps(caller.account_id, config=store.config)
    items = []
    for d in drawn:
        at = timestamp(START + timedelta(minutes=MINUTES * d.n))
        request = CreateIncident(title=f"incident {d.n}", status=d.status, severity=d.severity)
        summary = new_summary(caller, d.n + 1, request, at)
        items += created_items(store, caller, summary, [teams[t] for t in d.teams])
    write_batches(store, items)


def walk(
    store: Store,
    caller: Caller,
    lister: Lister,
    chosen: IncidentFilter,
    window: CreatedWindow,
    *,
    pages_at_most: int = PAGES,
) -> dict[str, Any]:
    """Up to `pages_at_most` pages of 25 with the handlers' read budget; per page cost."""
    cursor, pages = None, []
    for _ in range(pages_at_most):
        budget = PageBudget(read_units=200.0)
        request = PageRequest(25, cursor, budget, filter=chosen, window=window)
        page = lister(store, caller, State.OPEN, request)
        pages.append(page)
        cursor = page.next_cursor
        if not cursor:
            break
    items = sum(len(p.items) for p in pages)
    units = sum(p.stats.read_units for p in pages)
    return {
        "pages": len(pages),
        "items": items,
        "rcu_per_page": units / len(pages),
        "rcu_per_item": units / items if items else float("inf"),
        "items_read_per_item": sum(p.stats.items_read for p in pages) / max(items, 1),
        "requests_per_page": statistics.mean(p.stats.requests for p in pages),
        "round_trips_p95": sorted(p.stats.round_trips for p in pages)[int(0.95 * (len(pages) - 1))],
        "short_pages": sum(p.stats.budget_spent for p in pages),
    }


@dataclass(frozen=True)
class Scenario:
    """A list and the shard layout it is read over."""

    name: str
    lister: Lister
    open_shards: int
    with_teams: bool

    def store(self, client: DynamoDBClient, shards: int | None = None) -> Store:
        config = ShardConfig(
            state_shards=WeightedShards({"OPEN": shards or self.open_shards, "CLOSED": 32})
        )
        policy = GrowthPolicy(default_count=TEAM_SHARDS)
        secret = b"bench-cursor-secret-" * 2
        return build_store(client, TABLE, secret, config=config, participant_policy=policy)

    def account(self, store: Store, drawn: list[Drawn]) -> Caller:
        """A new account holding `drawn`, with the caller in `TEAMS` teams."""
        caller = Caller(new_id("acct"), new_id("user"))
        teams = []
        if self.with_teams:
            teams = [create_team(store, caller, CreateTeam(name=f"T{n}")).id for n in range(TEAMS)]
        seed(store, caller, drawn, teams)
        return caller


def measure(client: DynamoDBClient, scenario: Scenario) -> dict[str, dict[str, Any]]:
    """Every filter and window, each filter also over its sparse index; the unfiltered list
    under the severity-in-the-key design."""
    store = scenario.store(client)
    drawn = drawn_incidents(scenario.with_teams)
    caller = scenario.account(store, drawn)
    unfiltered = IncidentFilter()

    def run(on: Store, who: Caller, chosen: IncidentFilter, window: CreatedWindow) -> Any:
        return walk(on, who, scenario.lister, chosen, window)

    results = {"none": run(store, caller, unfiltered, CreatedWindow())}
    last = START + timedelta(minutes=MINUTES * INCIDENTS)
    for name, fraction in WINDOWS.items():
        since = last - timedelta(minutes=MINUTES * INCIDENTS * fraction)
        results[name] = run(store, caller, unfiltered, CreatedWindow(since=since))
    for name, chosen in FILTERS.items():
        results[name] = run(store, caller, chosen, CreatedWindow())
        sparse = scenario.account(store, [d for d in drawn if d.matches(chosen)])
        results[f"{name}: sparse index"] = run(store, sparse, unfiltered, CreatedWindow())
    store.engine.close()
    if not scenario.with_teams:
        for ranges in SEVERITY_RANGES:
            keyed = scenario.store(client, scenario.open_shards * ranges)
            results[f"none: severity in the key, {ranges}x streams"] = run(
                keyed, scenario.account(keyed, drawn), unfiltered, CreatedWindow()
            )
            keyed.engine.close()
    return results


OPEN_COUNTS = (50, 200, 1000, 4000)
"""Open incidents in the caller's teams, for "my teams' open SEV1/SEV2" walked to its end."""
SEV1_SEV2 = FILTERS["severity SEV1-SEV2 (10 %)"]


def sparse_index_walks(client: DynamoDBClient) -> list[dict[str, Any]]:
    """The most selective common query, "my teams' open SEV1/SEV2", walked to its end, by
    the filter expression and by a sparse index (the same list over only the matching
    incidents), at `OPEN_COUNTS` open incidents in the caller's teams."""
    scenario = SCENARIOS[2]
    store = scenario.store(client)
    drawn = drawn_incidents(with_teams=True)
    rows = []
    for count in OPEN_COUNTS:
        newest = drawn[-count:]
        caller = scenario.account(store, newest)
        sparse = scenario.account(store, [d for d in newest if d.matches(SEV1_SEV2)])
        everything = CreatedWindow()
        filtered = walk(store, caller, scenario.lister, SEV1_SEV2, everything, pages_at_most=10_000)
        indexed = walk(
            store, sparse, scenario.lister, IncidentFilter(), everything, pages_at_most=10_000
        )
        rows.append({"open": count, "filter": filtered, "sparse index": indexed})
    store.engine.close()
    return rows


def print_sparse_index_walks(rows: list[dict[str, Any]]) -> None:
    """The walks of `sparse_index_walks`, as a Markdown table."""
    print(
        f"\nmy teams' open SEV1/SEV2 ({TEAMS} teams x {TEAM_SHARDS} shards, about 10 % of the"
        " open incidents), walked to the end, pages of 25\n"
    )
    print(
        "| open incidents | matching | filter: pages / RCU / requests | sparse index: pages /"
        " RCU / requests | filter RCU / index RCU | filter RCU a matching incident |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        f, i = row["filter"], row["sparse index"]
        f_rcu, i_rcu = f["rcu_per_page"] * f["pages"], i["rcu_per_page"] * i["pages"]
        print(
            f"| {row['open']} | {f['items']} | {f['pages']} / {f_rcu:.1f} /"
            f" {f['requests_per_page'] * f['pages']:.0f} | {i['pages']} / {i_rcu:.1f} /"
            f" {i['requests_per_page'] * i['pages']:.0f} | {f_rcu / i_rcu:.1f}x |"
            f" {f_rcu / max(f['items'], 1):.2f} |"
        )


SCENARIOS = (
    Scenario("account, 16 shards", account_incidents, 16, with_teams=False),
    Scenario("account, 64 shards", account_incidents, 64, with_teams=False),
    Scenario(f"my teams, {TEAMS} x {TEAM_SHARDS} shards", my_teams_incidents, 16, with_teams=True),
)


def main() -> None:
    """Every scenario; ratios to the sparse-index oracle."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, TABLE)
        measured = {s.name: measure(client, s) for s in SCENARIOS}
        sparse_walks = sparse_index_walks(client)
    print(f"filtered walks on {engine.description}: {INCIDENTS} open incidents, pages of 25,")
    print(f"first {PAGES} pages, 200-unit budget; x oracle = RCU an item / the sparse index's")
    print("(windows and the key design: / the unfiltered walk's)")
    print(
        "scenario                  filter                                      items  RCU/page"
        "  RCU/item  x oracle  requests/page  trips p95  short"
    )
    for scenario, results in measured.items():
        for name, r in results.items():
            base = results.get(f"{name}: sparse index", results["none"])
            if name.endswith("sparse index"):
                base = r
            print(
                f"{scenario:<26}{name:<44}{r['items']:6d}{r['rcu_per_page']:10.1f}"
                f"{r['rcu_per_item']:10.3f}{r['rcu_per_item'] / base['rcu_per_item']:9.1f}x"
                f"{r['requests_per_page']:15.1f}{r['round_trips_p95']:11d}{r['short_pages']:7d}"
            )
    print_sparse_index_walks(sparse_walks)
    payload = {"incidents": INCIDENTS, "results": measured, "sparse_index_walks": sparse_walks}
    print(f"written to {save('filters', payload)}")


if __name__ == "__main__":
    with recording_tables():
        main()
