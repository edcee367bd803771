"""An update of an incident with the most participants: requests and milliseconds.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m
bench.patch_refresh``). On AWS DynamoDB Local, an incident with `MAX_PARTICIPANTS`
participants (the creator and 99 teams) is updated `ROUNDS` times the way the service
does it now (summary put, one query, one transaction of conditional updates) and, as the
baseline of the same run, the way it did before: the same summary put and query, then one
``UpdateItem`` per copy. Both write the same copies under the same conditions.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.support.local_store import local_store
from bench.support.report import save
from incidents.incident.commands import update_incident
from incidents.incident.copies import copy_fields, set_clause, summary_item
from incidents.incident.create import create_incident
from incidents.incident.participants import MAX_PARTICIPANTS, add_participant
from incidents.keys import participations_partition
from incidents.models import IncidentSummary, Role
from incidents.requests import AddParticipant, CreateIncident, CreateTeam, UpdateIncident
from incidents.store import Caller, Store
from incidents.team_commands import create_team
from incidents.timeline.events import require_counted

ROUNDS = 15


def full_incident(store: Store, caller: Caller) -> str:
    teams = [create_team(store, caller, CreateTeam(name=f"T{n}")).id for n in range(99)]
    incident = create_incident(store, caller, CreateIncident(title="big", teams=teams[:40]))
    for team in teams[40:]:
        add_participant(
            store, caller, incident.summary.id, AddParticipant(participant_id=team, role=Role.TEAM)
        )
    return incident.summary.id


def one_by_one(store: Store, caller: Caller, incident_id: str, title: str) -> None:
    """The update as it was: summary put and query as now, then an UpdateItem per copy."""
    summary = update_incident_summary_only(store, caller, incident_id, title)
    assignments, names, values = set_clause(copy_fields(summary))
    for copy in store.query_partition(participations_partition(caller.account_id, incident_id)):
        store.client.update_item(
            TableName=store.table_name,
            Key={"PK": copy["PK"], "SK": copy["SK"]},
            UpdateExpression=f"SET {assignments}",
            ConditionExpression="attribute_exists(PK) AND #iv < :version",
            ExpressionAttributeNames={**names, "#iv": "incident_version"},
            ExpressionAttributeValues={**values, ":version": {"N": str(summary.version)}},
        )


def update_incident_summary_only(
    store: Store, caller: Caller, incident_id: str, title: str
) -> IncidentSummary:
    """The summary write of an update (the refresh is the baseline's own)."""
    counted = require_counted(store, caller, incident_id)
    current = counted.summary
    updated = current.model_copy(update={"title": title, "version": current.version + 1})
    store.client.put_item(
        TableName=store.table_name,
        Item=summary_item(store, caller.account_id, updated, event_seq=counted.seq),
        ConditionExpression="#version = :expected",
        ExpressionAttributeNames={"#version": "version"},
        ExpressionAttributeValues={":expected": {"N": str(current.version)}},
    )
    return updated


def measure(store: Store, caller: Caller, incident_id: str, batched: bool) -> dict[str, float]:
    calls: list[str] = []

    def hook(model: Any, **_: Any) -> None:
        calls.append(model.name)

    store.client.meta.events.register("before-call.dynamodb", hook)
    samples = []
    for n in range(ROUNDS):
        calls.clear()
        started = time.perf_counter()
        if batched:
            update_incident(store, caller, incident_id, UpdateIncident(title=f"now {n}"))
        else:
            one_by_one(store, caller, incident_id, f"before {n}")
        samples.append((time.perf_counter() - started) * 1000)
    store.client.meta.events.unregister("before-call.dynamodb", hook)
    return {"requests": len(calls), "ms_median": statistics.median(samples)}


def main() -> None:
    """Both ways on one incident, alternately measured."""
    with local_store("bench-patch") as (store, caller, engine):
        incident_id = full_incident(store, caller)
        before = measure(store, caller, incident_id, batched=False)
        after = measure(store, caller, incident_id, batched=True)
    print(f"PATCH of an incident with {MAX_PARTICIPANTS} participants, {engine.description}")
    print(f"median of {ROUNDS}     requests      ms")
    for name, figures in (("one UpdateItem a copy", before), ("one transaction", after)):
        print(f"{name:<22}{figures['requests']:9.0f}{figures['ms_median']:8.1f}")
    print(
        f"ratio (before / now)  {before['requests'] / after['requests']:9.1f}x"
        f"{before['ms_median'] / after['ms_median']:7.1f}x"
    )
    payload = {"participants": MAX_PARTICIPANTS, "before": before, "now": after}
    print(f"written to {save('patch_refresh', payload)}")


if __name__ == "__main__":
    main()
