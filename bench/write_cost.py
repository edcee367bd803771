"""What each incident command costs to write: WCU, RCU, requests and milliseconds.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m
bench.write_cost``). On AWS DynamoDB Local every command runs `ROUNDS` times on incidents
with a creator, one assignee and one team; every request asks for ``ConsumedCapacity``
(``INDEXES``: the table's and each index's units) and the figures are DynamoDB Local's own.
The timeline's event rides in each command's transaction, so its cost shows here against
the baseline recorded before it existed (``BASELINE``, measured by this bench on the
commit before the timeline, same machine).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.support.local_store import local_store
from bench.support.report import RESULTS_DIR, recording_tables, save
from incidents.incident import commands, participants
from incidents.incident import create as creating
from incidents.models import Role, Severity
from incidents.requests import (
    AddNote,
    AddParticipant,
    CreateIncident,
    CreateTeam,
    SaveProfile,
    UpdateIncident,
)
from incidents.store import Caller, Store, new_id
from incidents.team_commands import create_team
from incidents.users import save_profile

ROUNDS = 30
BASELINE = RESULTS_DIR / "write_cost_baseline.json"
"""This bench's run on the commit before the timeline (a7ac178, DynamoDB Local, same
machine): the cost of each command without its event."""


@dataclass
class Meter:
    """Requests and consumed units of every call the client makes while it is on."""

    requests: int = 0
    wcu: float = 0.0
    rcu: float = 0.0
    names: list[str] = field(default_factory=list)

    def before(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        self.requests += 1
        self.names.append(model.name)
        params["ReturnConsumedCapacity"] = "INDEXES"

    def after(self, parsed: dict[str, Any], **_: Any) -> None:
        consumed = parsed.get("ConsumedCapacity") or []
        for unit in consumed if isinstance(consumed, list) else [consumed]:
            total = float(unit.get("CapacityUnits", 0.0))
            reads = float(unit.get("ReadCapacityUnits", 0.0))
            writes = float(unit.get("WriteCapacityUnits", 0.0))
            if reads or writes:
                self.rcu, self.wcu = self.rcu + reads, self.wcu + writes
            elif parsed.get("Item") is not None or "Items" in parsed or "Count" in parsed:
                self.rcu += total
            else:
                self.wcu += total


def metered(store: Store) -> Meter:
    meter = Meter()
    events = store.client.meta.events
    events.register("provide-client-params.dynamodb.*", meter.before)
    events.register("after-call.dynamodb.*", meter.after)
    return meter


def measure(store: Store, meter: Meter, run: Callable[[int], Any]) -> dict[str, float]:
    """Median milliseconds and mean units and requests of `ROUNDS` runs."""
    samples = []
    start = (meter.requests, meter.wcu, meter.rcu)
    for n in range(ROUNDS):
        began = time.perf_counter()
        run(n)
        samples.append((time.perf_counter() - began) * 1000)
    return {
        "requests": (meter.requests - start[0]) / ROUNDS,
        "wcu": (meter.wcu - start[1]) / ROUNDS,
        "rcu": (meter.rcu - start[2]) / ROUNDS,
        "ms_median": statistics.median(samples),
    }


def commands_to_measure(store: Store, caller: Caller) -> dict[str, Callable[[int], Any]]:
    """Each command, on incidents made beforehand so that each run changes something."""
    save_profile(store, caller, SaveProfile(name="Bench"))
    other = Caller(caller.account_id, new_id("user"))
    save_profile(store, other, SaveProfile(name="Other"))
    team = create_team(store, caller, CreateTeam(name="Bench team")).id
    request = CreateIncident(title="bench", assignees=[other.user_id], teams=[team])
    made = [creating.create_incident(store, caller, request).summary.id for _ in range(ROUNDS)]
    joiner = Caller(caller.account_id, new_id("user"))
    save_profile(store, joiner, SaveProfile(name="Joiner"))
    add = AddParticipant(participant_id=joiner.user_id, role=Role.RESPONDER)
    severities = [Severity.SEV1, Severity.SEV2]
    return {
        "create": lambda n: creating.create_incident(store, caller, request),
        "update": lambda n: commands.update_incident(
            store, caller, made[n], UpdateIncident(severity=severities[n % 2])
        ),
        "resolve": lambda n: commands.resolve_incident(store, caller, made[n]),
        "add participant": lambda n: participants.add_participant(store, caller, made[n], add),
        "remove participant": lambda n: participants.remove_participant(
            store, caller, made[n], joiner.user_id
        ),
        "note": lambda n: commands.add_note(store, caller, made[n], AddNote(text=f"note {n}")),
    }


def main() -> None:
    """Every command measured in turn on one table."""
    with local_store("bench-writes") as (store, caller, engine):
        runs = commands_to_measure(store, caller)
        meter = metered(store)
        figures = {name: measure(store, meter, run) for name, run in runs.items()}
    before = json.loads(BASELINE.read_text())["commands"]
    with recording_tables():
        print(f"Write cost per command, mean of {ROUNDS} ({engine.description})")
        print()
        print("| command | WCU | before | RCU | before | requests | before | ms p50 | before |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, now in figures.items():
            was = before.get(name)
            cells = [f"{now['wcu']:.1f}", _was(was, "wcu"), f"{now['rcu']:.1f}"]
            cells += [_was(was, "rcu"), f"{now['requests']:.1f}", _was(was, "requests")]
            cells += [f"{now['ms_median']:.1f}", _was(was, "ms_median")]
            print(f"| {name} | {' | '.join(cells)} |")
        print(f"written to {save('write_cost', {'rounds': ROUNDS, 'commands': figures})}")


def _was(before: dict[str, float] | None, key: str) -> str:
    return "-" if before is None else f"{before[key]:.1f}"


if __name__ == "__main__":
    main()
