"""Deterministic demo data for `make dev`: accounts, teams, users, and thousands of incidents.

Every item is built by the same functions the services use (so the keys are exactly the
ones the API reads) and written with ``BatchWriteItem``, 25 at a time, with a progress bar.
The same seed gives the same ids, titles, states and tokens on every start.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError
from ksuid import Ksuid

from dynashard.query import Item
from incidents.incident.create import new_incident_items
from incidents.items import details_body
from incidents.keys import counter_key
from incidents.models import (
    EventParticipant,
    EventType,
    IncidentSummary,
    Membership,
    Note,
    Participation,
    Role,
    Severity,
    Status,
    Team,
    TimelineEvent,
    User,
    UserRole,
    timestamp,
)
from incidents.store import Caller, Store, condition_failed
from incidents.table import PK, SK, item_key, key_of
from incidents.team_commands import membership_item, team_item
from incidents.timeline.events import change_event, created_event, plain_event
from incidents.users import listed_item, owner_item, profile_item

START = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
BATCH = 25
RICH_STORIES = 0.25
"""Share of demo incidents whose timeline has notes and a responder joining (every one has
its creation and status changes): enough to show, without doubling start-up."""
SERVICES = [
    "checkout", "payments", "search", "login", "notifications", "billing", "inventory",
    "recommendations", "image CDN", "orders API", "GraphQL gateway", "Kafka cluster",
]  # fmt: skip
SYMPTOMS = [
    "5xx spike", "p99 latency above 2 s", "error budget burn", "queue backlog growing",
    "certificate expiring", "disk 95% full", "replica lag", "memory leak after deploy",
    "elevated throttling", "health checks flapping", "stale cache", "timeouts to upstream",
]  # fmt: skip
DEMO_TIME_ZONES = ["Europe/London", "America/Chicago", "Asia/Kolkata", "Australia/Sydney"]
"""The demo users' time zones, in turn: a follow-the-sun team."""
TEAM_NAMES = ["SRE", "Payments", "Platform", "Search", "Identity", "Data", "Mobile", "Edge"]
FIRST_NAMES = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Radia",
               "Guido", "Frances", "Edsger", "Hedy", "Alan", "Katherine"]  # fmt: skip


@dataclass(frozen=True)
class DemoSize:
    """How much to seed; ``DEMO_INCIDENTS``, ``DEMO_ACCOUNTS`` and ``DEMO_SEED`` override;
    ``DEMO_STAGE_COUNTS=1`` gives the accounts the stage's counts (a stage from before the
    per-account maps) instead of a new account's."""

    accounts: int = 2
    teams_per_account: int = 5
    users_per_account: int = 8
    incidents: int = 1000
    seed: int = 7
    stage_counts: bool = False

    @classmethod
    def from_env(cls) -> DemoSize:
        """Sizes from the environment, defaults otherwise."""
        return cls(
            accounts=int(os.environ.get("DEMO_ACCOUNTS", cls.accounts)),
            incidents=int(os.environ.get("DEMO_INCIDENTS", cls.incidents)),
            seed=int(os.environ.get("DEMO_SEED", cls.seed)),
            stage_counts=os.environ.get("DEMO_STAGE_COUNTS") == "1",
        )


@dataclass
class DemoAccount:
    """One seeded account: its users (with dev tokens) and teams."""

    account_id: str
    users: list[User] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)
    teams: list[Team] = field(default_factory=list)
    members: dict[str, list[str]] = field(default_factory=dict)
    incidents: int = 0


class _Ids:
    """KSUIDs from a seeded generator: time-ordered and the same on every run."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def new(self, prefix: str, at: datetime) -> str:
        return f"{prefix}_{Ksuid(datetime=at, payload=self._rng.randbytes(16))}"


def demo_accounts(size: DemoSize) -> list[DemoAccount]:
    """The accounts of `size` (users, tokens, teams), computed without touching the table."""
    return _people(size)[2]


def demo_seeded(store: Store, accounts: list[DemoAccount]) -> bool:
    """Whether a seeding of `accounts` completed: the counters are written last."""
    pk, sk = counter_key(accounts[-1].account_id)
    return store.get(pk, sk) is not None


def prepare_demo(store: Store, size: DemoSize, *, reseed: bool = False) -> list[DemoAccount]:
    """The demo accounts, written first unless the table holds a complete seeding of them
    (a table left half-seeded by a crash is seeded again, so every printed token works)."""
    accounts = demo_accounts(size)
    if reseed or not demo_seeded(store, accounts):
        return seed_demo(store, size)
    return accounts


def seed_demo(store: Store, size: DemoSize) -> list[DemoAccount]:
    """Write the demo data of `size` through `store`; returns the accounts with their tokens.

    Writing again is safe: the same seed gives the same items, an incident already in the
    table is left as it is (rewriting it would put its summary back to version 1 while a
    copy stays ahead, and the version guard would then never refresh that copy), and the
    incident counters only move forward, so incidents created since keep their numbers.
    """
    rng, ids, accounts = _people(size)
    items = [item for account in accounts for item in _people_items(account)]
    stage = store.config if size.stage_counts else None
    for account in accounts:  # a new account's maps, as its first create writes them
        if store.get(*counter_key(account.account_id)) is None:
            store.shards.ensure_maps(account.account_id, config=stage)
    incidents = []
    for n in range(size.incidents):
        account = accounts[n % len(accounts)]
        account.incidents += 1
        at = START + timedelta(minutes=37 * n + rng.randint(0, 30))
        incidents.append(_incident_items(store, ids, rng, account, at))
    stored = _stored_keys(store, [summary for summary, *_ in incidents])
    for incident in incidents:
        if _key(incident[0]) not in stored:
            items += incident
    write_batches(store, items)
    for account in accounts:
        advance_counter(store, account.account_id, account.incidents)
    return accounts


def _people(size: DemoSize) -> tuple[random.Random, _Ids, list[DemoAccount]]:
    rng = random.Random(size.seed)
    ids = _Ids(rng)
    return rng, ids, [_account(ids, rng, size, n) for n in range(size.accounts)]


def _account(ids: _Ids, rng: random.Random, size: DemoSize, n: int) -> DemoAccount:
    account = DemoAccount(ids.new("acct", START - timedelta(days=30 - n)))
    for u in range(size.users_per_account):
        name = f"{FIRST_NAMES[(u + 3 * n) % len(FIRST_NAMES)]} {chr(65 + n)}."
        user_id = ids.new("user", START - timedelta(days=20, minutes=u))
        email = f"{name.split(maxsplit=1)[0].lower()}.{n}@example.com"
        role = UserRole.OWNER if u == 0 else UserRole.USER
        zone = DEMO_TIME_ZONES[u % len(DEMO_TIME_ZONES)]
        account.users.append(User(id=user_id, name=name, email=email, time_zone=zone, role=role))
        digest = hashlib.sha256(f"{size.seed}:{user_id}".encode()).hexdigest()
        account.tokens[f"dev-{digest[:24]}"] = user_id
    for t in range(size.teams_per_account):
        created_by = account.users[t % len(account.users)].id
        at = START - timedelta(days=10, hours=t)
        team = Team(
            id=ids.new("team", at),
            name=TEAM_NAMES[t % len(TEAM_NAMES)],
            created_by=created_by,
            created_at=timestamp(at),
        )
        account.teams.append(team)
        # Everyone is in one to three teams: the first user is in the most.
        account.members[team.id] = [
            user.id for u, user in enumerate(account.users) if u == 0 or (u + t) % 3 == 0
        ]
    return account


def _people_items(account: DemoAccount) -> list[Item]:
    items = [owner_item(account.account_id, account.users[0].id)]
    for user in account.users:
        items += [profile_item(account.account_id, user), listed_item(account.account_id, user)]
    for team in account.teams:
        items.append(team_item(account.account_id, team, members=len(account.members[team.id])))
        items += [
            membership_item(
                account.account_id,
                Membership(team_id=team.id, user_id=user_id, added_at=team.created_at),
            )
            for user_id in account.members[team.id]
        ]
    return items


def _incident_items(
    store: Store, ids: _Ids, rng: random.Random, account: DemoAccount, at: datetime
) -> list[Item]:
    creator = rng.choice(account.users).id
    status = rng.choices(list(Status), weights=[3, 2, 5])[0]
    summary = IncidentSummary(
        id=ids.new("inc", at),
        number=account.incidents,
        title=f"{rng.choice(SERVICES).capitalize()}: {rng.choice(SYMPTOMS)}",
        status=status,
        severity=rng.choices(list(Severity), weights=[1, 3, 5, 3, 1])[0],
        created_by=creator,
        created_at=timestamp(at),
        updated_at=timestamp(at + timedelta(minutes=rng.randint(0, 600))),
        version=1,
    )
    roles: dict[str, set[Role]] = {creator: {Role.CREATOR}}
    for user in rng.sample(account.users, rng.randint(0, 2)):
        roles.setdefault(user.id, set()).add(Role.ASSIGNEE)
    for team in rng.sample(account.teams, rng.choice([1, 1, 1, 2, 3])):
        roles.setdefault(team.id, set()).add(Role.TEAM)
    first = summary.model_copy(
        update={"status": Status.TRIGGERED, "updated_at": summary.created_at}
    )
    story = _Story(ids, rng, account, first, roles)
    story.tell(status, rich=rng.random() < RICH_STORIES)
    copies = [
        Participation(participant_id=pid, roles=sorted(r), incident=story.summary)
        for pid, r in roles.items()
    ]
    body = details_body({"runbook": f"https://runbooks.example.com/{summary.id}", "seeded": True})
    return new_incident_items(
        store, account.account_id, story.summary, body, copies, history=story.events(copies)
    )


@dataclass
class _Story:
    """An incident's timeline as people make it: triggered, a note, a responder joins,
    acknowledged, mitigated, resolved; the summary ends where the story ends."""

    ids: _Ids
    rng: random.Random
    account: DemoAccount
    summary: IncidentSummary
    roles: dict[str, set[Role]]
    later: list[tuple[TimelineEvent, IncidentSummary]] = field(default_factory=list)
    clock: str = ""
    """When the story is (each step a few minutes after the one before)."""

    def tell(self, status: Status, *, rich: bool) -> None:
        """The changes that lead to `status`; a `rich` story has notes and a responder too."""
        service = self.summary.title.split(":", maxsplit=1)[0]
        if rich:
            self._note(f"Investigating: {service} dashboards open, paging the owners")
            self._responder_joins()
        if status is not Status.TRIGGERED:
            self._change(Status.ACKNOWLEDGED)
            if rich:
                self._note(f"Mitigated: rolled back the last {service.lower()} deploy")
        if status is Status.RESOLVED:
            self._change(Status.RESOLVED)

    def events(self, copies: list[Participation]) -> list[tuple[TimelineEvent, IncidentSummary]]:
        """Event 1 (the creation, with the first participants) and the rest, each with the
        summary after it."""
        creator = self.summary.created_by
        at = self.summary.created_at
        initial = [c for c in copies if Role.RESPONDER not in c.roles]
        first = self.summary.model_copy(
            update={"status": Status.TRIGGERED, "version": 1, "updated_at": at}
        )
        created = created_event(first, initial, creator, at)
        return [(self._own_id(created), first), *self.later]

    def _next_at(self) -> str:
        moment = datetime.fromisoformat(
            (self.clock or self.summary.created_at).replace("Z", "+00:00")
        )
        self.clock = timestamp(moment + timedelta(minutes=self.rng.randint(2, 40)))
        return self.clock

    def _actor(self) -> Caller:
        return Caller(self.account.account_id, self.rng.choice(self.account.users).id)

    def _own_id(self, event: TimelineEvent) -> TimelineEvent:
        at = datetime.fromisoformat(event.at.replace("Z", "+00:00"))
        return event.model_copy(update={"id": self.ids.new("evt", at)})

    def _add(self, event: TimelineEvent) -> None:
        self.later.append((self._own_id(event), self.summary))

    def _note(self, text: str) -> None:
        at = self._next_at()
        seq = len(self.later) + 2
        self._add(
            plain_event(
                EventType.NOTE_ADDED, self.summary, self._actor(), seq, at, note=Note(text=text)
            )
        )

    def _responder_joins(self) -> None:
        user = self.rng.choice(self.account.users).id
        if user in self.roles:
            return
        self.roles[user] = {Role.RESPONDER}
        at = self._next_at()
        joined = EventParticipant(participant_id=user, role=Role.RESPONDER)
        seq = len(self.later) + 2
        actor = Caller(self.account.account_id, user)
        self._add(
            plain_event(
                EventType.PARTICIPANT_ADDED, self.summary, actor, seq, at, participant=joined
            )
        )

    def _change(self, status: Status) -> None:
        before = self.summary
        after = before.model_copy(
            update={"status": status, "version": before.version + 1, "updated_at": self._next_at()}
        )
        self.summary = after
        self._add(change_event(before, after, self._actor(), len(self.later) + 2))


def created_items(
    store: Store, caller: Caller, summary: IncidentSummary, teams: Sequence[str] = ()
) -> list[Item]:
    """`summary`'s items as a create by `caller` writes them, on `teams`: the summary, empty
    details, the creator's copy and one copy a team (for seeding benches and tests)."""
    copies = [Participation(participant_id=caller.user_id, roles=[Role.CREATOR], incident=summary)]
    copies += [Participation(participant_id=t, roles=[Role.TEAM], incident=summary) for t in teams]
    store.shards.ensure_maps(caller.account_id)  # as the account's first create would
    return new_incident_items(store, caller.account_id, summary, details_body({}), copies)


def _key(item: Item) -> tuple[str, str]:
    return item[PK]["S"], item[SK]["S"]


def _stored_keys(store: Store, items: list[Item]) -> set[tuple[str, str]]:
    """The keys of `items` that the table holds (BatchGetItem, 100 keys a request)."""
    found: set[tuple[str, str]] = set()
    for start in range(0, len(items), 100):
        keys = [key_of(item) for item in items[start : start + 100]]
        request: Any = {store.table_name: {"Keys": keys, "ProjectionExpression": f"{PK}, {SK}"}}
        while request:
            response = store.client.batch_get_item(RequestItems=request)
            found.update(_key(item) for item in response["Responses"][store.table_name])
            request = response.get("UnprocessedKeys") or {}
    return found


def advance_counter(store: Store, account_id: str, value: int) -> None:
    """Raise the account's incident counter to `value`; never lower it."""
    pk, sk = counter_key(account_id)
    try:
        store.client.update_item(
            TableName=store.table_name,
            Key=item_key(pk, sk),
            UpdateExpression="SET #value = :value",
            ConditionExpression="attribute_not_exists(#value) OR #value < :value",
            ExpressionAttributeNames={"#value": "value"},
            ExpressionAttributeValues={":value": {"N": str(value)}},
        )
    except ClientError as error:
        if not condition_failed(error):
            raise


WRITERS = 8
"""Batches in flight at once while seeding (within a client pool of 10)."""


def write_batches(store: Store, items: list[Item]) -> None:
    """``BatchWriteItem`` in batches of 25, `WRITERS` at a time (the local engines take
    concurrent writes: start-up is mostly this), retrying unprocessed items, with a
    progress bar."""

    def write(batch: list[Item]) -> int:
        request = {store.table_name: [{"PutRequest": {"Item": item}} for item in batch]}
        while request:
            response = store.client.batch_write_item(RequestItems=request)  # type: ignore[arg-type]
            request = response.get("UnprocessedItems") or {}  # type: ignore[assignment]
        return len(batch)

    done = 0
    with ThreadPoolExecutor(WRITERS) as pool:
        for written in pool.map(write, _chunks(items)):
            done += written
            _progress(done, len(items))
    print(file=sys.stderr)


def _chunks(items: list[Item]) -> Iterator[list[Item]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


def _progress(done: int, total: int) -> None:
    width = 40
    filled = width * done // max(total, 1)
    bar = "#" * filled + "-" * (width - filled)
    print(f"\rseeding [{bar}] {done:,}/{total:,} items", end="", file=sys.stderr, flush=True)


def callers(accounts: list[DemoAccount]) -> dict[str, Caller]:
    """Dev token -> caller, for the local authorizer."""
    return {
        token: Caller(account.account_id, user_id)
        for account in accounts
        for token, user_id in account.tokens.items()
    }
