"""The publisher's event source mapping, as synthesized, keeps exactly what the local stream
poller hands the publisher (`event_pipeline.PUBLISHED`): for each kind of write the table's
stream carries, its filters (read with moto's EventBridge pattern matcher: Lambda's filters
are EventBridge patterns) match when a local predicate takes the record, and only then."""

from __future__ import annotations

from typing import Any, cast

import pytest
from moto.events.models import EventPattern

from local.events.event_pipeline import PUBLISHED
from tests.helpers.synth import Synthesized


def record(event: str, item_type: str, attempts: str = "0") -> dict[str, Any]:
    image = {"PK": {"S": "acct_1#inc_1"}, "SK": {"S": "x"}, "Type": {"S": item_type},
             "attempts": {"N": attempts}}  # fmt: skip
    images = {} if event == "REMOVE" else {"NewImage": image}
    return {"eventName": event, "dynamodb": {"Keys": {"PK": image["PK"]}, **images}}


WRITES = [
    (event, item_type, attempts)
    for event in ("INSERT", "MODIFY", "REMOVE")
    for item_type in ("event", "page", "notification", "verification_message", "summary")
    for attempts in ("0", "1")
]


@pytest.fixture(scope="module")
def patterns(dev: Synthesized) -> list[EventPattern]:
    (mapping,) = [
        resource["Properties"]
        for resource in dev.api.find_resources("AWS::Lambda::EventSourceMapping").values()
        if "FilterCriteria" in resource["Properties"]
    ]
    return [EventPattern.load(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]]


@pytest.mark.parametrize(("event", "item_type", "attempts"), WRITES)
def test_the_cloud_filters_keep_what_the_local_poller_keeps(
    patterns: list[EventPattern], event: str, item_type: str, attempts: str
) -> None:
    written = record(event, item_type, attempts)
    as_event = cast("Any", written)  # a stream record, matched as EventBridge matches events
    in_the_cloud = any(pattern.matches_event(as_event) for pattern in patterns)
    assert in_the_cloud == any(kept(written) for kept in PUBLISHED)


def test_new_codes_are_published_not_their_tries_and_nothing_removed() -> None:
    """The table above is not empty on either side (a filter matching nothing would agree)."""
    kept = {w for w in WRITES if any(p(record(*w)) for p in PUBLISHED)}
    assert ("MODIFY", "verification_message", "0") in kept, "a newer code"
    assert ("MODIFY", "verification_message", "1") not in kept, "a try recorded"
    assert ("INSERT", "event", "1") in kept
    assert not {w for w in kept if w[0] == "REMOVE"}
