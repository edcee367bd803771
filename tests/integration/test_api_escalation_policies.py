"""Escalation policies over HTTP, in PagerDuty's names: made, read, listed, replaced (the
version moves) and deleted; what they name must be the account's; a policy an integration
names is not deleted from under it; API keys need ``escalation_policies:read|manage``;
nothing crosses accounts."""

from __future__ import annotations

from typing import Any

import pytest

from incidents.store import Caller, new_id
from local.api.gateway import LocalGateway
from tests.helpers.api_harness import Api
from tests.helpers.people import new_api_user
from tests.integration.test_api_keys import call, new_key

pytestmark = pytest.mark.integration


@pytest.fixture
def owner(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"), "Ada")


def policy(user: str, **changes: Any) -> dict[str, Any]:
    return {
        "name": "Payments",
        "num_loops": 2,
        "escalation_rules": [
            {"escalation_delay_in_minutes": 5, "targets": [{"type": "user", "id": user}]},
            {"escalation_delay_in_minutes": 15,
             "targets": [{"type": "user_reference", "id": user}],
             "escalation_rule_assignment_strategy": "round_robin"},
        ],
        **changes,
    }  # fmt: skip


def test_a_policy_is_made_read_replaced_and_deleted(api: Api, owner: Caller) -> None:
    made = api.call("create_escalation_policy", owner, body=policy(owner.user_id))
    assert made.status == 201, made.body
    assert made.headers["Location"] == f"/escalation-policies/{made.body['id']}"
    rules = made.body["escalation_rules"]
    assert [r["targets"][0]["type"] for r in rules] == ["user_reference"] * 2
    assert (made.body["version"], made.body["num_loops"]) == (1, 2)
    ids = {"policy_id": made.body["id"]}
    assert api.call("get_escalation_policy", owner, ids).body == made.body
    listed = api.call("list_escalation_policies", owner).body
    assert [p["id"] for p in listed["items"]] == [made.body["id"]]
    replaced = api.call(
        "replace_escalation_policy", owner, ids, body=policy(owner.user_id, num_loops=0)
    )
    assert (replaced.status, replaced.body["version"], replaced.body["num_loops"]) == (200, 2, 0)
    assert api.call("delete_escalation_policy", owner, ids).status == 204
    assert api.call("get_escalation_policy", owner, ids).status == 404


def test_what_a_policy_names_must_be_the_account_s(api: Api, owner: Caller) -> None:
    stranger = new_id("user")
    refused = api.call("create_escalation_policy", owner, body=policy(stranger))
    assert (refused.status, refused.body["code"]) == (404, "not_found")
    assert stranger in refused.body["message"]
    mismatched = policy(owner.user_id)
    mismatched["escalation_rules"][0]["targets"] = [{"type": "schedule", "id": owner.user_id}]
    bad = api.call("create_escalation_policy", owner, body=mismatched)
    assert (bad.status, bad.body["code"]) == (400, "validation_error")
    for field, value in (("num_loops", 10), ("num_loops", "1"), ("escalation_rules", [])):
        bad = api.call(
            "create_escalation_policy", owner, body=policy(owner.user_id, **{field: value})
        )
        assert bad.status == 400, (field, value)


def test_a_policy_an_integration_names_stays(api: Api, owner: Caller) -> None:
    made = api.call("create_escalation_policy", owner, body=policy(owner.user_id)).body
    ids = {"policy_id": made["id"]}
    integration = api.call(
        "create_integration", owner, body={"name": "cron", "escalation_policy_id": made["id"]}
    )
    assert integration.status == 201, integration.body
    assert integration.body["escalation_policy_id"] == made["id"]
    replaced = api.call("replace_escalation_policy", owner, ids, body=policy(owner.user_id))
    assert replaced.status == 200, "a replace keeps the count of what names the policy"
    refused = api.call("delete_escalation_policy", owner, ids)
    assert (refused.status, refused.body["code"]) == (409, "conflict")
    moved = api.call(
        "update_integration", owner, {"integration_id": integration.body["id"]},
        body={"escalation_policy_id": None},
    )  # fmt: skip
    assert moved.status == 200, moved.body
    assert api.call("delete_escalation_policy", owner, ids).status == 204
    unknown = api.call(
        "create_integration", owner, body={"name": "x", "escalation_policy_id": made["id"]}
    )
    assert (unknown.status, unknown.body["code"]) == (404, "not_found")


def test_an_integration_s_urgency_rule_is_kept_and_checked_with_its_hours(
    api: Api, owner: Caller
) -> None:
    """PagerDuty's ``incident_urgency_rule`` and ``support_hours``: high by default; a rule
    by support hours needs them, in the same request or already kept."""
    made = api.call("create_integration", owner, body={"name": "cron"})
    assert made.body["incident_urgency_rule"] == {"type": "constant", "urgency": "high"}
    ids = {"integration_id": made.body["id"]}
    by_hours = {"type": "use_support_hours",
                "during_support_hours": {"type": "constant", "urgency": "high"},
                "outside_support_hours": {"type": "constant", "urgency": "low"}}  # fmt: skip
    refused = api.call("update_integration", owner, ids, body={"incident_urgency_rule": by_hours})
    assert (refused.status, refused.body["code"]) == (400, "validation_error")
    assert "support_hours" in refused.body["message"]
    hours = {"type": "fixed_time_per_day", "time_zone": "Asia/Tokyo", "days_of_week": [1, 2],
             "start_time": "10:00:00", "end_time": "18:30:00"}  # fmt: skip
    both = {"incident_urgency_rule": by_hours, "support_hours": hours}
    changed = api.call("update_integration", owner, ids, body=both)
    assert changed.status == 200, changed.body
    read = api.call("get_integration", owner, ids).body
    assert (read["incident_urgency_rule"], read["support_hours"]) == (by_hours, hours)
    cleared = api.call("update_integration", owner, ids, body={"support_hours": None})
    assert (cleared.status, cleared.body["code"]) == (400, "validation_error")


def test_keys_need_the_policies_scopes_and_accounts_stay_apart(api: Api, owner: Caller) -> None:
    gateway = LocalGateway(api.handlers, {})
    reader = new_key(api, owner, "escalation_policies:read")
    manager = new_key(api, owner, "escalation_policies:manage")
    status, _, made = call(gateway, manager["key"], "POST", "/escalation-policies",
                           policy(owner.user_id))  # fmt: skip
    assert status == 201, made
    status, _, read = call(gateway, reader["key"], "GET", f"/escalation-policies/{made['id']}")
    assert (status, read["id"]) == (200, made["id"])
    status, _, refused = call(gateway, reader["key"], "POST", "/escalation-policies",
                              policy(owner.user_id))  # fmt: skip
    assert (status, refused["message"]) == (
        403,
        "this API key lacks the scope escalation_policies:manage",
    )
    other = new_api_user(api, new_id("acct"), "Eve")
    hidden = api.call("get_escalation_policy", other, {"policy_id": made["id"]})
    assert hidden.status == 404
    assert api.call("list_escalation_policies", other).body["items"] == []
