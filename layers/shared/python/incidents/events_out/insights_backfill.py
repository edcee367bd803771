"""Insights for history: each incident's figures counted from its timeline.

For incidents older than insights (their progress never saw event 1). Run it once the
publisher that counts insights is deployed everywhere: an older publisher replaces the
position item whole and would drop a progress this wrote. Each incident is read from where
its progress stands, so a run counts only what is missing, a second run counts nothing,
and a run racing the stream counts each event once (the progress moves under a condition;
the loser reads again).

    python -m incidents.events_out.insights_backfill --table incidents-dev --account acct_...
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import boto3

from incidents.events_out.publish_order import (
    PublishRaceError,
    count_insights,
    published_position,
)
from incidents.insights.progress import counted
from incidents.models import EventType, IncidentCreated
from incidents.paging import MAX_LIMIT, PageRequest
from incidents.store import Caller, Store, build_store
from incidents.timeline.events import event_from_item
from incidents.timeline.queries import EventRequest, account_events, stored_events

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

ATTEMPTS = 5
"""Reads of one incident while the stream keeps moving its progress."""
OPERATOR = "user_insightsbackfill0000000000000"
"""Who the backfill lists the account's incidents as (its cursors never leave it)."""


def backfill_account(store: Store, account: str) -> int:
    """Count every incident's missing figures; the number of figures added."""
    return sum(
        backfill_incident(store, account, incident) for incident in incident_ids(store, account)
    )


def incident_ids(store: Store, account: str) -> Iterator[str]:
    """Every incident of the account, by its ``incident.created`` event: events never
    change, so an incident resolved or reopened during the walk is not missed (as it could
    be between lists by state)."""
    caller = Caller(account, OPERATOR)
    cursor: str | None = None
    while True:
        request = EventRequest(PageRequest(MAX_LIMIT, cursor), types=(EventType.CREATED,))
        page = account_events(store, caller, request)
        yield from (e.incident_id for e in page.items if isinstance(e, IncidentCreated))
        if not page.has_more:
            return
        cursor = page.next_cursor


def backfill_incident(store: Store, account: str, incident_id: str) -> int:
    """Count the incident's events its progress has not; the number of figures added."""
    for _ in range(ATTEMPTS):
        was = published_position(store, account, incident_id).insights
        stored = stored_events(store, account, incident_id, was.seq + 1)
        events = [event_from_item(item) for item in stored]
        now, figures = counted(was, events)
        if now == was:
            return 0
        try:
            count_insights(store, account, incident_id, was, now=now, figures=figures)
        except PublishRaceError:
            continue
        return len(figures)
    raise PublishRaceError(f"incident {incident_id} kept moving; run the backfill again")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m incidents.events_out.insights_backfill", description=__doc__
    )
    parser.add_argument("--table", required=True)
    parser.add_argument("--account", required=True)
    parser.add_argument("--endpoint", default=None, help="make dev's engine, for example")
    parser.add_argument("--region", default=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Backfill one account; prints the figures added."""
    args = _parser().parse_args(argv)
    client: DynamoDBClient = boto3.client(
        "dynamodb", endpoint_url=args.endpoint, region_name=args.region
    )
    store = build_store(client, args.table, secrets.token_bytes(32))
    added = backfill_account(store, args.account)
    print(json.dumps({"account": args.account, "figures_added": added}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
