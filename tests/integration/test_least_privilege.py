"""Least privilege, proven both ways from what the handlers really called.

The integration and end-to-end suites record every DynamoDB call each handler group makes
(`local.api.call_log`: transactions as their per-item actions, batches per table, queries on an
index as the index). After them, every recorded permission must be allowed by that group's
synthesized policy, and every granted permission must be used by a recorded call or carry a
reason in `stacks.permissions.GRANTED_FOR_THE_RUNTIME`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from lambdas.routes import Group
from stacks.permissions import GRANTED_FOR_THE_RUNTIME
from tests.conftest import HandlerCalls
from tests.helpers.synth import Stages, Synthesized, policy_statements

pytestmark = [pytest.mark.integration, pytest.mark.after_suites]


NAMED = {
    "CursorSecret": "cursor-secret",
    "EventsOutDeliveries": "queue",
    "EventsOutStreamFailures": "stream-failures",
    "EventsOutBus": "bus",
    "TimersFiringQueue": "timer-queue",
    "EventsOutReceiptsFailedReceipts": "failed-receipts",
}
"""Logical ids (without CDK's hash) of the resources policies name, as the call log names them."""


def resource_name(resource: Any) -> str:
    """A policy resource as the call log names it: ``table``, ``table/index/GSI1``, ..."""
    if resource == "*":
        return "*"
    if "Fn::Join" in resource:
        _, (base, suffix) = resource["Fn::Join"]
        return f"{resource_name(base)}{suffix}"
    imported = resource.get("Fn::ImportValue", "")
    if "Table" in imported:
        return "table-stream" if "Stream" in imported else "table"
    logical = resource.get("Ref") or resource.get("Fn::GetAtt", [""])[0]
    if "logs" in logical:
        return "log-group"
    name = NAMED.get(re.sub(r"[0-9A-F]{8}$", "", logical))
    if name is not None:
        return name
    raise AssertionError(f"a policy resource this test does not know: {resource}")


def granted(synthesized: Synthesized, group: Group | str) -> set[tuple[str, str]]:
    """Every (action, resource) the group's role allows."""
    return {
        (action, resource_name(resource))
        for statement in policy_statements(synthesized, group)
        for action in _listed(statement["Action"])
        for resource in _listed(statement["Resource"])
    }


def _listed(value: Any) -> Iterator[Any]:
    yield from value if isinstance(value, list) else [value]


@pytest.fixture(scope="module")
def dev_stage(synthesized: Stages) -> Synthesized:
    return synthesized("dev")


GRANTED_TO_EVENT_SOURCES = {
    ("sqs:SendMessage", "stream-failures"): "the stream mapping's on-failure destination",
    ("sqs:DeleteMessage", "stream-failures"): "the recovery's queue mapping deletes what it did",
    ("sqs:ChangeMessageVisibility", "stream-failures"): "the recovery's queue mapping (CDK)",
    ("sqs:DeleteMessage", "timer-queue"): "the workers' queue mapping deletes what they fired",
    ("sqs:ChangeMessageVisibility", "timer-queue"): "the workers' queue mapping (CDK)",
    **dict.fromkeys(
        [
            (action, "failed-receipts")
            for action in ("sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl")
        ],
        "Lambda's on-failure destination of the receipts' invocations (CDK's grant)",
    ),
}
"""Grants an event source mapping (or an asynchronous invocation's destination) uses on a
resource the function's code never calls."""

FUNCTIONS: dict[str, Group | str] = {
    **{group.value: group for group in Group},
    "authorizer": "lambdas.authorizer.handler",
    "publisher": "lambdas.publisher.handler",
    "sender": "lambdas.sender.handler",
    "stream-recovery": "lambdas.stream_recovery.handler",
    "shard-mover": "lambdas.shard_mover.handler",
    "sweeper": "lambdas.sweeper.handler",
    "timer-worker": "lambdas.timer_worker.handler",
    "receipts": "lambdas.receipts.handler",
}
"""Every function: one per API handler group, the API's authorizer, events out's publisher,
sender, stream recovery and receipts, the shard mover and the timers' sweep and workers."""


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_call_is_allowed_and_every_grant_is_used(
    handler_calls: HandlerCalls, dev_stage: Synthesized, name: str
) -> None:
    group = FUNCTIONS[name]
    used = {(c.action, c.resource) for c in handler_calls.all() if c.group == name}
    if not used:
        assert not handler_calls.shared, f"no call of {name} recorded in {handler_calls.directory}"
        pytest.skip("needs the integration and end-to-end suites' call logs (make test)")
    allowed = granted(dev_stage, group)
    assert used - allowed == set(), "calls the deployed role would refuse"
    unused = {
        (a, r)
        for a, r in allowed - used
        if a not in GRANTED_FOR_THE_RUNTIME and (a, r) not in GRANTED_TO_EVENT_SOURCES
    }
    assert unused == set(), "grants no recorded call uses (remove them or give a reason)"
