"""Users, schedules, overrides and who is on call over HTTP, with PagerDuty's names: the
account's users listed and edited (time zones by IANA name, roles by owners and admins),
schedules made, rendered, edited, previewed and deleted, overrides, and ``/oncalls``
answered from the materialized shifts; nothing crosses accounts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from icalendar import Calendar

from incidents.models import parse_timestamp as parse
from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api, Reply
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration

WEEK = 7 * 86_400


@pytest.fixture
def owner(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"), "Ada")


def colleague(api: Api, owner: Caller, name: str) -> Caller:
    return new_api_user(api, owner.account_id, name)


def layer(users: list[str], turn: int = WEEK, **changes: Any) -> dict[str, Any]:
    return {
        "name": "Primary",
        "start": "2026-01-05T00:00:00Z",
        "users": [{"user_id": user} for user in users],
        "rotation_virtual_start": "2026-01-05T09:00:00Z",
        "rotation_turn_length_seconds": turn,
        **changes,
    }


def schedule_body(users: list[str], **changes: Any) -> dict[str, Any]:
    return {
        "name": "Payments primary",
        "time_zone": "America/Chicago",
        "schedule_layers": [layer(users)],
        **changes,
    }


def test_the_account_s_users_are_listed_and_its_first_is_the_owner(api: Api, owner: Caller) -> None:
    bob = colleague(api, owner, "Bob")
    first = api.call("list_users", owner, query={"limit": ["1"]})
    assert first.status == 200, first.body
    rest = api.call("list_users", owner, query={"cursor": [first.body["next_cursor"]]}).body
    assert (len(first.body["items"]), rest["has_more"]) == (1, False)
    assert {(u["id"], u["role"], u["time_zone"]) for u in first.body["items"] + rest["items"]} == {
        (owner.user_id, "owner", "UTC"),
        (bob.user_id, "user", "UTC"),
    }
    stranger = new_api_user(api, new_id("acct"), "Mallory")
    assert [u["id"] for u in api.call("list_users", stranger).body["items"]] == [stranger.user_id]


def test_a_user_changes_their_own_profile_and_owners_change_roles(api: Api, owner: Caller) -> None:
    bob, cyd = colleague(api, owner, "Bob"), colleague(api, owner, "Cyd")
    path = {"user_id": bob.user_id}
    moved = api.call("update_user", bob, path, body={"time_zone": "Europe/Berlin"})
    assert (moved.status, moved.body["time_zone"]) == (200, "Europe/Berlin")
    assert api.call("get_profile", cyd, path).body["time_zone"] == "Europe/Berlin"
    unknown = api.call("update_user", bob, path, body={"time_zone": "Mars/Olympus_Mons"})
    assert (unknown.status, unknown.body["code"]) == (400, "validation_error")
    assert "Mars/Olympus_Mons" in unknown.body["message"]
    for who, body in ((cyd, {"name": "Bobby"}), (bob, {"role": "admin"})):
        refused = api.call("update_user", who, path, body=body)
        assert (refused.status, refused.body["code"]) == (403, "forbidden"), body
    promoted = api.call("update_user", owner, path, body={"role": "admin"})
    assert (promoted.status, promoted.body["role"]) == (200, "admin")
    renamed = api.call("update_user", bob, {"user_id": cyd.user_id}, body={"name": "Cyd C."})
    assert (renamed.status, renamed.body["name"]) == (200, "Cyd C.")
    odd: list[dict[str, Any]] = [{"role": "owner"}, {}, {"name": None}]
    for body in odd:
        bad = api.call("update_user", owner, path, body=body)
        assert (bad.status, bad.body["code"]) == (400, "validation_error"), body
    demoted = api.call("update_user", bob, {"user_id": owner.user_id}, body={"role": "user"})
    assert (demoted.status, demoted.body["code"]) == (400, "validation_error")
    saved = api.call("save_profile", bob, body={"name": "Bob B."}).body
    assert (saved["role"], saved["time_zone"]) == ("admin", "Europe/Berlin")  # kept by PUT /me
    mallory = new_api_user(api, new_id("acct"), "Mallory")
    assert api.call("update_user", mallory, path, body={"name": "x"}).status == 404


def test_a_schedule_s_life_over_http(api: Api, owner: Caller) -> None:
    bob, cyd = colleague(api, owner, "Bob"), colleague(api, owner, "Cyd")
    created = api.call("create_schedule", owner, body=schedule_body([owner.user_id, bob.user_id]))
    assert created.status == 201, created.body
    schedule = created.body
    assert created.headers["Location"] == f"/schedules/{schedule['id']}"
    path = {"schedule_id": schedule["id"]}
    week = {"since": ["2026-01-05T15:00:00Z"], "until": ["2026-01-19T15:00:00Z"]}
    read = api.call("get_schedule", owner, path, query=week).body
    assert [(e["start"][:16], e["user"]["id"]) for e in read["final_schedule"][
        "rendered_schedule_entries"]] == [
        ("2026-01-05T15:00", owner.user_id),
        ("2026-01-12T09:00", bob.user_id),  # 03:00 in Chicago, as the virtual start
        ("2026-01-19T09:00", owner.user_id),
    ]  # fmt: skip
    assert read["schedule_layers"][0]["rendered_coverage_percentage"] == 100.0
    change = {**schedule_body([cyd.user_id]), "effective_at": "2099-01-01T00:00:00Z"}
    edited = api.call("update_schedule", owner, path, body=change)
    assert (edited.status, edited.body["version"]) == (200, 2)
    assert api.call("get_schedule", owner, path, query=week).body["final_schedule"] == read[
        "final_schedule"]  # fmt: skip
    override = {"start": "2099-02-01T00:00:00Z", "end": "2099-02-02T00:00:00Z",
                "user_id": bob.user_id}  # fmt: skip
    made = api.call("create_override", owner, path, body=override)
    assert made.status == 201, made.body
    window = {"since": ["2099-01-15T00:00:00Z"], "until": ["2099-02-15T00:00:00Z"]}
    listed = api.call("list_overrides", owner, path, query=window).body["overrides"]
    assert [o["id"] for o in listed] == [made.body["id"]]
    gone = api.call("delete_override", owner, {**path, "override_id": made.body["id"]})
    assert gone.status == 204
    assert [s["id"] for s in api.call("list_schedules", owner).body["items"]] == [schedule["id"]]
    assert api.call("delete_schedule", owner, path).status == 204
    assert api.call("get_schedule", owner, path).status == 404


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"time_zone": "Central Standard Time"}, "Central Standard Time"),
        ({"schedule_layers": [layer([new_id("user")], turn=59)]}, "rotation_turn_length"),
        ({"schedule_layers": [layer([new_id("user")])] * 11}, "schedule_layers"),
        ({"schedule_layers": [layer([new_id("user")] * 101)]}, "users"),
        ({"schedule_layers": [layer([new_id("user")], end="2026-01-01T00:00:00Z")]}, "end"),
    ],
)
def test_a_bad_schedule_is_a_400_naming_its_field(
    api: Api, owner: Caller, change: dict[str, Any], field: str
) -> None:
    refused = api.call("create_schedule", owner, body={**schedule_body([]), **change})
    assert (refused.status, refused.body["code"]) == (400, "validation_error"), refused.body
    assert field in refused.body["message"]


def test_a_preview_renders_without_saving(api: Api, owner: Caller) -> None:
    query = {"since": ["2026-01-05T15:00:00Z"], "until": ["2026-01-06T15:00:00Z"]}
    shown = api.call("preview_schedule", owner, query=query,
                     body=schedule_body([owner.user_id]))  # fmt: skip
    assert shown.status == 200, shown.body
    assert shown.body["final_schedule"]["rendered_coverage_percentage"] == 100.0
    assert api.call("list_schedules", owner).body["items"] == []


def test_who_is_on_call_now_across_the_account_and_for_one_user(api: Api, owner: Caller) -> None:
    bob, cyd = colleague(api, owner, "Bob"), colleague(api, owner, "Cyd")
    team = api.call("create_team", owner, body={"name": "Payments"}).body["id"]
    everyone = [owner.user_id, bob.user_id, cyd.user_id]
    mine = api.call("create_schedule", owner, body=schedule_body(everyone, team_ids=[team])).body
    other = api.call("create_schedule", owner, body={
        **schedule_body([cyd.user_id]), "name": "Search"}).body  # fmt: skip
    now = api.call("list_oncalls", owner)
    assert now.status == 200, now.body
    shown = {(e["schedule"]["id"], e["user"]["id"]) for e in now.body["oncalls"]}
    final = {s["id"]: s["final_schedule"]["rendered_schedule_entries"][0] for s in (mine, other)}
    assert shown == {(sid, entry["user"]["id"]) for sid, entry in final.items()}
    for query, expected in [
        ({"schedule_ids[]": [other["id"]]}, {other["id"]}),
        ({"team_ids[]": [team]}, {mine["id"]}),
        ({"user_ids[]": [cyd.user_id]}, {other["id"]} | (
            {mine["id"]} if final[mine["id"]]["user"]["id"] == cyd.user_id else set())),
    ]:  # fmt: skip
        answer = api.call("list_oncalls", owner, query=query).body["oncalls"]
        assert {e["schedule"]["id"] for e in answer} == expected, query
    cyds = api.call("user_oncalls", owner, {"user_id": cyd.user_id}).body["oncalls"]
    assert {e["schedule"]["summary"] for e in cyds} >= {"Search"}
    mallory = new_api_user(api, new_id("acct"), "Mallory")
    assert api.call("list_oncalls", mallory).body["oncalls"] == []
    assert api.call("user_oncalls", mallory, {"user_id": cyd.user_id}).status == 404
    too_long = {"since": ["2026-01-01T00:00:00Z"], "until": ["2026-06-01T00:00:00Z"]}
    refused = api.call("list_oncalls", owner, query=too_long)
    assert (refused.status, refused.body["code"]) == (400, "validation_error")


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("get_schedule", {"since": ["9999-12-31T00:00:00Z"]}),
        ("list_overrides", {"until": ["0001-01-01T00:00:00+01:00"]}),
        ("list_oncalls", {"since": ["0001-01-01T00:00:00-01:00"]}),
        ("preview_schedule", {"since": ["9999-12-31T23:59:59-01:00"]}),
    ],
)
def test_a_range_at_the_calendar_s_ends_is_a_400_naming_it(
    api: Api, owner: Caller, name: str, query: dict[str, list[str]]
) -> None:
    made = api.call("create_schedule", owner, body=schedule_body([owner.user_id])).body
    body = schedule_body([owner.user_id]) if name == "preview_schedule" else None
    path = None if name in ("list_oncalls", "preview_schedule") else {"schedule_id": made["id"]}
    refused = api.call(name, owner, path, query=query, body=body)
    assert (refused.status, refused.body["code"]) == (400, "validation_error")
    assert next(iter(query)) in refused.body["message"]


def test_minute_turns_render_as_far_as_an_answer_may_hold(api: Api, owner: Caller) -> None:
    """Ten layers of one-minute turns: the schedule is made and shown over the range an
    answer may hold; a longer range is a 400 saying how long one may be."""
    body = {**schedule_body([]), "schedule_layers": [layer([owner.user_id], turn=60)] * 10}
    created = api.call("create_schedule", owner, body=body)
    assert created.status == 201, created.body
    shown = created.body["final_schedule"]["rendered_schedule_entries"]
    assert 0 < len(shown) <= 25_000
    week = {"since": ["2026-03-01T00:00:00Z"], "until": ["2026-03-08T00:00:00Z"]}
    refused = api.call("get_schedule", owner, {"schedule_id": created.body["id"]}, query=week)
    assert (refused.status, refused.body["code"]) == (400, "validation_error")
    assert "ask for at most 0.87 days" in refused.body["message"]


def feed_events(reply: Reply) -> list[tuple[datetime, datetime, str]]:
    """Each event of a feed as a calendar app reads it: start, end (UTC) and title."""
    assert (reply.status, reply.headers["Content-Type"]) == (200, "text/calendar; charset=utf-8")
    calendar = Calendar.from_ical(reply.text)
    return [
        (e.decoded("DTSTART"), e.decoded("DTEND"), str(e["SUMMARY"]))
        for e in calendar.walk("VEVENT")
    ]


def feed_path(urls: dict[str, str]) -> dict[str, str]:
    """The path parameters of a feed's URL (``…/{id}/ical/{token}``)."""
    assert urls["web_cal_url"].startswith("webcal://"), urls
    subject, _, token = urls["http_cal_url"].split("/")[-3:]
    return {"id": subject, "token": token}


def test_calendar_feeds_at_secret_urls(api: Api, owner: Caller) -> None:
    bob, cyd = colleague(api, owner, "Bob"), colleague(api, owner, "Cyd")
    users = [owner.user_id, bob.user_id]
    made = [
        api.call("create_schedule", owner, body=schedule_body(users, name=name)).body["id"]
        for name in ("Payments primary", "Search primary")
    ]
    rotated = api.call("rotate_schedule_feed", owner, {"schedule_id": made[0]})
    assert rotated.status == 200, rotated.body
    assert rotated.body["http_cal_url"].startswith("https://127.0.0.1/schedules/")
    token = feed_path(rotated.body)["token"]
    events = feed_events(api.call("schedule_feed", None, {"schedule_id": made[0], "token": token}))
    assert 13 <= len(events) <= 15, events  # a week back, 90 days on, weekly turns
    span = {"since": [events[0][0].isoformat()], "until": [events[-1][1].isoformat()]}
    rendered = api.call("get_schedule", owner, {"schedule_id": made[0]}, query=span).body
    names = {owner.user_id: "Ada", bob.user_id: "Bob"}
    assert events == [
        (parse(e["start"]), parse(e["end"]), f"On call: {names[e['user']['id']]}")
        for e in rendered["final_schedule"]["rendered_schedule_entries"]
    ]
    again = api.call("rotate_schedule_feed", owner, {"schedule_id": made[0]}).body
    stale = api.call("schedule_feed", None, {"schedule_id": made[0], "token": token})
    assert (stale.status, stale.body["code"]) == (404, "not_found")  # rotated away
    other = api.call("schedule_feed", None, {"schedule_id": made[1], **_token(again)})
    assert other.status == 404  # a token is one feed's, not the account's
    assert api.call("schedule_feed", None, {"schedule_id": made[0], **_token(again)}).status == 200
    for forged in (token[:-1] + "A", "acct_x.y", token.replace("acct_", "acct_0", 1)[:-1]):
        bad = api.call("schedule_feed", None, {"schedule_id": made[0], "token": forged})
        assert (bad.status, bad.body["code"]) == (404, "not_found"), forged

    refused = api.call("rotate_user_feed", cyd, {"user_id": bob.user_id})
    assert (refused.status, refused.body["code"]) == (403, "forbidden")
    mine = api.call("rotate_user_feed", bob, {"user_id": bob.user_id}).body
    bobs = feed_events(api.call("user_feed", None, {"user_id": bob.user_id, **_token(mine)}))
    titles = {title for _, _, title in bobs}
    assert titles == {"On call: Payments primary", "On call: Search primary"}
    assert len(bobs) == 2 * len([e for e in events if e[2] == "On call: Bob"])
    nothing = api.call("rotate_user_feed", owner, {"user_id": cyd.user_id}).body  # an admin's
    cyds = api.call("user_feed", None, {"user_id": cyd.user_id, **_token(nothing)})
    assert feed_events(cyds) == []
    assert api.call("user_feed", None, {"user_id": cyd.user_id, **_token(mine)}).status == 404
    assert api.call("delete_schedule", owner, {"schedule_id": made[0]}).status == 204
    gone = api.call("schedule_feed", None, {"schedule_id": made[0], **_token(again)})
    assert gone.status == 404


def _token(urls: dict[str, str]) -> dict[str, str]:
    return {"token": feed_path(urls)["token"]}
