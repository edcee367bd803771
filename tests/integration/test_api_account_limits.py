"""Account limits over HTTP and under races: heartbeats, maintenance windows not yet ended
and schedules are refused past the stage's limit with ``409 limit_reached`` naming it; a
delete (a window's end) frees a place at once; concurrent creates at the limit never pass
it; and one account's limit is its own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.account_limits import AccountLimits, LimitReachedError
from incidents.alerts.integrations import create_integration
from incidents.alerts.models import NewIntegration
from incidents.heartbeats.commands import create_heartbeat, list_heartbeats
from incidents.heartbeats.models import NewHeartbeat
from incidents.schedules.commands import create_schedule, list_schedules
from incidents.schedules.models import ScheduleRequest
from incidents.store import Caller, Store, build_store, new_id
from lambdas import runtime
from tests.helpers.api_harness import Api, Reply
from tests.helpers.people import new_api_user, new_user
from tests.integration.conftest import API_TABLE
from tests.integration.test_api_schedules import schedule_body

pytestmark = pytest.mark.integration
RACERS = 8


@pytest.fixture
def owner(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"), "Ada")


def limit_reached(reply: Reply, message: str) -> None:
    assert reply.status == 409, reply.body
    assert reply.body == {"code": "limit_reached", "message": message}


def heartbeat(api: Api, who: Caller, integration: str, name: str) -> Reply:
    body = {"name": name, "interval": 5, "integration_id": integration}
    return api.call("create_heartbeat", who, body=body)


def integration_of(api: Api, who: Caller) -> str:
    reply = api.call("create_integration", who, body={"name": "cron"})
    assert reply.status == 201, reply.body
    return str(reply.body["id"])


def test_heartbeats_past_the_limit_are_refused_until_one_is_deleted(
    api: Api, owner: Caller, set_limits: Callable[..., None]
) -> None:
    set_limits(HEARTBEATS_PER_ACCOUNT=2)
    sender = integration_of(api, owner)
    assert heartbeat(api, owner, sender, "backup").status == 201
    duplicate = heartbeat(api, owner, sender, "backup")
    assert (duplicate.status, duplicate.body["code"]) == (409, "conflict"), "counts nothing"
    assert heartbeat(api, owner, sender, "queue").status == 201
    refused = heartbeat(api, owner, sender, "cron")
    limit_reached(refused, "an account holds at most 2 heartbeats; delete one first")

    other = new_api_user(api, new_id("acct"), "Bob")
    assert heartbeat(api, other, integration_of(api, other), "cron").status == 201, "its own"
    assert api.call("delete_heartbeat", owner, {"name": "queue"}).status == 204
    assert heartbeat(api, owner, sender, "cron").status == 201
    limit_reached(heartbeat(api, owner, sender, "queue"), refused.body["message"])


def window(api: Api, who: Caller, integration: str, *, starts: int) -> Reply:
    """A window on `integration` from `starts` minutes from now, an hour long."""
    start = datetime.now(UTC) + timedelta(minutes=starts)
    end = start + timedelta(hours=1)
    body = {"integration_id": integration, "description": "upgrade",
            "start_time": start.isoformat(), "end_time": end.isoformat()}  # fmt: skip
    return api.call("create_maintenance_window", who, body=body)


def test_windows_not_yet_ended_past_the_limit_are_refused_until_one_ends_or_goes(
    api: Api, owner: Caller, set_limits: Callable[..., None]
) -> None:
    set_limits(MAINTENANCE_WINDOWS_PER_ACCOUNT=2)
    sender = integration_of(api, owner)
    ongoing = window(api, owner, sender, starts=0).body["id"]
    later = window(api, owner, sender, starts=120).body["id"]
    message = (
        "an account holds at most 2 maintenance windows not yet ended; end or delete one first"
    )
    limit_reached(window(api, owner, sender, starts=60), message)

    assert api.call("end_maintenance_window", owner, {"window_id": ongoing}).status == 200
    assert window(api, owner, sender, starts=60).status == 201
    limit_reached(window(api, owner, sender, starts=60), message)
    assert api.call("delete_maintenance_window", owner, {"window_id": later}).status == 204
    assert window(api, owner, sender, starts=60).status == 201


def test_schedules_past_the_limit_are_refused_until_one_is_deleted(
    api: Api, owner: Caller, set_limits: Callable[..., None]
) -> None:
    set_limits(SCHEDULES_PER_ACCOUNT=2)
    body = schedule_body([owner.user_id])
    first = api.call("create_schedule", owner, body=body)
    assert first.status == 201, first.body
    assert api.call("create_schedule", owner, body=body).status == 201
    refused = api.call("create_schedule", owner, body=body)
    limit_reached(refused, "an account holds at most 2 schedules; delete one first")

    schedule = {"schedule_id": first.body["id"]}
    assert api.call("delete_schedule", owner, schedule).status == 204
    assert api.call("create_schedule", owner, body=body).status == 201
    limit_reached(api.call("create_schedule", owner, body=body), refused.body["message"])


def test_a_bad_limit_setting_is_refused_as_a_cold_start_refuses_it(
    set_limits: Callable[..., None],
) -> None:
    with pytest.raises(ValueError, match="MAINTENANCE_WINDOWS_PER_ACCOUNT must be at most 1000"):
        set_limits(MAINTENANCE_WINDOWS_PER_ACCOUNT=1001)


@pytest.fixture
def limited() -> Store:
    """A store on the API's table whose accounts hold at most 3 heartbeats and 3 schedules."""
    store = build_store(runtime.dynamodb(), API_TABLE, b"s" * 32)
    store.limits = AccountLimits(heartbeats=3, schedules=3)
    return store


def race(create: Callable[[int], object]) -> list[str]:
    """`RACERS` creates at once: each one's outcome."""

    def outcome(n: int) -> str:
        try:
            create(n)
        except LimitReachedError:
            return "limit reached"
        return "created"

    with ThreadPoolExecutor(RACERS) as pool:
        return sorted(pool.map(outcome, range(RACERS)))


def test_concurrent_heartbeats_at_the_limit_never_pass_it(limited: Store) -> None:
    owner = Caller(new_id("acct"), new_id("user"))
    sender = create_integration(limited, owner, NewIntegration(name="cron")).id

    def create(n: int) -> Any:
        beat = {"name": f"beat-{n}", "interval": 5, "integration_id": sender}
        return create_heartbeat(limited, owner, NewHeartbeat.model_validate(beat))

    create(RACERS)
    assert race(create) == ["created"] * 2 + ["limit reached"] * (RACERS - 2)
    assert len(list_heartbeats(limited, owner).items) == 3


def test_concurrent_schedules_at_the_limit_never_pass_it(limited: Store) -> None:
    owner = Caller(new_id("acct"), new_id("user"))
    user = new_user(limited, owner.account_id)
    request = ScheduleRequest.model_validate(schedule_body([user]))

    def create(_: int) -> Any:
        return create_schedule(limited, owner, request)

    create(0)
    assert race(create) == ["created"] * 2 + ["limit reached"] * (RACERS - 2)
    assert len(list_schedules(limited, owner).items) == 3
