"""Contact methods and notification rules over HTTP, with PagerDuty's names and shapes:
made, listed, replaced and deleted by their own user; numbers written as E.164; a method
verified only by the code its waiting message carries (wrong, expired, void and used codes
refused); the first profile save's email method and rule; the limits per user; who may
read and change them (the user, an admin reading, an API key with ``users:manage``); and
nothing across accounts."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from incidents.contacts.deliverable import deliverable_methods
from incidents.contacts.messages import pending_verification_message
from incidents.contacts.models import Channel, Urgency
from incidents.store import Caller, new_id
from lambdas import runtime
from local.api.gateway import LocalGateway
from tests.helpers.api_harness import Api, Reply
from tests.helpers.clock import WallClock
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration

NUMBER = "+14155552671"
SLACK = "https://hooks.slack.com/services/T000/B000/XXXX"


@pytest.fixture
def owner(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"), "Ada")


@pytest.fixture
def clock(api: Api, monkeypatch: pytest.MonkeyPatch) -> WallClock:
    """The handlers' store reads this clock for the test."""
    moved = WallClock(datetime.now(UTC))
    monkeypatch.setattr(runtime.store(), "clock", moved)
    return moved


def method(kind: str, address: str, **more: Any) -> dict[str, Any]:
    return {"contact_method": {"type": f"{kind}_contact_method", "label": "Work",
                               "address": address, **more}}  # fmt: skip


def add(api: Api, who: Caller, body: dict[str, Any], user: Caller | None = None) -> Reply:
    path = {"user_id": (user or who).user_id}
    return api.call("create_contact_method", who, path, body=body)


def added(api: Api, who: Caller, kind: str, address: str, **more: Any) -> dict[str, Any]:
    reply = add(api, who, method(kind, address, **more))
    assert reply.status == 201, reply.body
    return dict(reply.body["contact_method"])


def at(who: Caller, method_id: str) -> dict[str, str]:
    return {"user_id": who.user_id, "contact_method_id": method_id}


def code_of(who: Caller, method_id: str) -> str:
    """The code in the message waiting for delivery, as the delivery path reads it."""
    message = pending_verification_message(runtime.store(), who.account_id, who.user_id, method_id)
    assert message is not None
    found = re.search(r"\d(?:, )?\d(?:, )?\d(?:, )?\d(?:, )?\d(?:, )?\d", message.body)
    assert found is not None, message.body
    return found.group().replace(", ", "")


def verify(api: Api, who: Caller, method_id: str, code: str) -> Reply:
    return api.call("verify_contact_method", who, at(who, method_id), body={"code": code})


def rule(method_id: str, kind: str = "email", delay: int = 0, urgency: str = "high") -> Any:
    reference = {"id": method_id, "type": f"{kind}_contact_method_reference"}
    return {"notification_rule": {"start_delay_in_minutes": delay, "urgency": urgency,
                                  "contact_method": reference}}  # fmt: skip


def test_a_person_adds_lists_replaces_and_deletes_their_methods(api: Api, owner: Caller) -> None:
    email = added(api, owner, "email", "Ada@Example.com")
    sms = added(api, owner, "sms", "(415) 555-2671", country_code=1)
    assert (email["address"], email["verified"], email["enabled"]) == (
        "Ada@example.com", False, True,
    ), "normalized as a profile's email is; unverified"  # fmt: skip
    assert (sms["type"], sms["address"], sms["country_code"]) == ("sms_contact_method", NUMBER, 1)
    assert email["summary"] == "Work"
    listed = api.call("list_contact_methods", owner, {"user_id": owner.user_id})
    assert {m["id"] for m in listed.body["contact_methods"]} == {email["id"], sms["id"]}
    path = at(owner, sms["id"])
    assert api.call("get_contact_method", owner, path).body == {"contact_method": sms}
    body = method("sms", NUMBER, label="Mobile", enabled=False)
    replaced = api.call("replace_contact_method", owner, path, body=body)
    assert replaced.status == 200, replaced.body
    shown = replaced.body["contact_method"]
    assert (shown["label"], shown["summary"], shown["enabled"]) == ("Mobile", "Mobile", False)
    other_type = api.call("replace_contact_method", owner, path, body=method("phone", NUMBER))
    assert (other_type.status, other_type.body["code"]) == (400, "validation_error")
    assert api.call("delete_contact_method", owner, path).status == 204
    assert api.call("get_contact_method", owner, path).status == 404
    assert api.call("delete_contact_method", owner, path).status == 404


@pytest.mark.parametrize(
    ("kind", "address", "more", "e164", "country"),
    [
        ("phone", "+44 20 7946 0958", {}, "+442079460958", 44),
        ("sms", "2079460958", {"country_code": 44}, "+442079460958", 44),
        ("phone", "+1-415-555-2671", {"country_code": 1}, NUMBER, 1),
    ],
)
def test_numbers_are_written_as_e164(
    api: Api, owner: Caller, kind: str, address: str, more: dict[str, Any], e164: str, country: int
) -> None:
    made = added(api, owner, kind, address, **more)
    assert (made["address"], made["country_code"]) == (e164, country)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (method("sms", "+1 555 555 5555"), "numbering plan"),
        (method("sms", "4155552671"), "country_code"),
        (method("phone", "+44 20 7946 0958", country_code=1), "country code is 44"),
        (method("phone", "call me"), "country_code"),
        (method("sms", "+1 415 CALL ME", country_code=1), "not a valid number"),
        (method("email", "not-an-email"), "email"),
        (method("push_notification", "device"), "does not match any of the expected tags"),
        ({"contact_method": {"type": "email_contact_method", "address": "a@example.com"}}, "label"),
    ],
)
def test_bad_addresses_are_refused(api: Api, owner: Caller, body: Any, problem: str) -> None:
    reply = add(api, owner, body)
    assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body
    assert problem in reply.body["message"]


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.1/hook",
        "https://192.168.1.10/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://hooks.slack.com:22/services/T/B/X",
        "http://hooks.slack.com/services/T/B/X",
        "https://user:secret@hooks.slack.com/services/T/B/X",
        "https://0xa000001/hook",
    ],
)
def test_slack_webhooks_are_checked_as_webhook_urls_are(api: Api, owner: Caller, url: str) -> None:
    reply = add(api, owner, method("slack", url))
    assert (reply.status, reply.body["code"]) == (400, "invalid_url"), reply.body


def test_a_code_verifies_its_method_once_and_is_kept_only_as_a_digest(
    api: Api, owner: Caller, clock: WallClock
) -> None:
    slack = added(api, owner, "slack", SLACK)
    message = pending_verification_message(
        runtime.store(), owner.account_id, owner.user_id, slack["id"]
    )
    assert message is not None
    assert (message.channel, message.to, message.purpose) == (Channel.SLACK, SLACK, "verification")
    code = code_of(owner, slack["id"])
    stored = runtime.store().get(f"{owner.account_id}#{owner.user_id}", slack["id"])
    assert stored is not None
    assert code not in str(stored), "the method keeps the code's digest only"
    verified = verify(api, owner, slack["id"], code)
    assert (verified.status, verified.body["contact_method"]["verified"]) == (200, True)
    assert (
        pending_verification_message(runtime.store(), owner.account_id, owner.user_id, slack["id"])
        is None
    ), "its message goes with its use"
    again = verify(api, owner, slack["id"], code)
    assert (again.status, again.body["code"]) == (409, "already_verified")
    resend = api.call("send_contact_method_verification", owner, at(owner, slack["id"]))
    assert (resend.status, resend.body["code"]) == (409, "already_verified")


def test_wrong_codes_count_and_the_fifth_voids_the_code(
    api: Api, owner: Caller, clock: WallClock
) -> None:
    phone = added(api, owner, "phone", NUMBER)
    code = code_of(owner, phone["id"])
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    for left in (4, 3, 2, 1):
        reply = verify(api, owner, phone["id"], wrong)
        assert (reply.status, reply.body["code"]) == (400, "invalid_code")
        assert f"{left} attempts left" in reply.body["message"]
    last = verify(api, owner, phone["id"], wrong)
    assert "last attempt" in last.body["message"]
    void = verify(api, owner, phone["id"], code)
    assert (void.status, void.body["code"]) == (409, "too_many_attempts"), "even the right one"
    malformed = verify(api, owner, phone["id"], "12345")
    assert (malformed.status, malformed.body["code"]) == (400, "validation_error")
    clock.advance(61)
    resend = api.call("send_contact_method_verification", owner, at(owner, phone["id"]))
    assert resend.status == 202, resend.body
    assert resend.body["verification"] == {
        "contact_method_id": phone["id"], "channel": "voice", "attempts_allowed": 5,
        "expires_at": resend.body["verification"]["expires_at"], "delivery": "pending",
    }  # fmt: skip
    fresh = code_of(owner, phone["id"])
    assert verify(api, owner, phone["id"], fresh).status == 200


def test_an_address_gets_five_codes_a_day_whichever_method_asks(
    api: Api, owner: Caller, clock: WallClock
) -> None:
    """Once a minute would still be 1,440 codes a day to a stranger's phone: an address
    gets five, from any of the account's methods (deleting and adding it back gains
    nothing), then one each 4.8 hours."""
    sms = added(api, owner, "sms", NUMBER)  # the first code
    for _ in range(4):
        clock.advance(61)
        assert (
            api.call("send_contact_method_verification", owner, at(owner, sms["id"])).status == 202
        )
    clock.advance(61)
    sixth = api.call("send_contact_method_verification", owner, at(owner, sms["id"]))
    assert (sixth.status, sixth.body["code"]) == (409, "too_many_codes"), sixth.body
    assert "ask for another from" in sixth.body["message"]
    assert api.call("delete_contact_method", owner, at(owner, sms["id"])).status == 204
    again = add(api, owner, method("phone", NUMBER))
    assert (again.status, again.body["code"]) == (409, "too_many_codes"), "the same number"
    assert added(api, owner, "sms", "+14155552672")["address"] == "+14155552672", "another"
    clock.advance(4.8 * 3600)
    assert added(api, owner, "sms", NUMBER)["verified"] is False, "one more, 4.8 h on"


def test_a_code_expires_and_new_ones_come_at_most_once_a_minute(
    api: Api, owner: Caller, clock: WallClock
) -> None:
    sms = added(api, owner, "sms", NUMBER)
    code = code_of(owner, sms["id"])
    soon = api.call("send_contact_method_verification", owner, at(owner, sms["id"]))
    assert (soon.status, soon.body["code"]) == (409, "code_sent_recently")
    clock.advance(15 * 60)
    expired = verify(api, owner, sms["id"], code)
    assert (expired.status, expired.body["code"]) == (409, "code_expired")
    assert (
        pending_verification_message(runtime.store(), owner.account_id, owner.user_id, sms["id"])
        is None
    ), "an expired code's message is no use sending"
    assert api.call("send_contact_method_verification", owner, at(owner, sms["id"])).status == 202
    replaced = code_of(owner, sms["id"])
    clock.advance(61)
    assert api.call("send_contact_method_verification", owner, at(owner, sms["id"])).status == 202
    stale = verify(api, owner, sms["id"], replaced)
    assert (stale.status, stale.body["code"]) == (400, "invalid_code"), "a newer code voids it"


def test_a_new_address_is_unverified_and_sent_a_new_code(
    api: Api, owner: Caller, clock: WallClock
) -> None:
    email = added(api, owner, "email", "ada@example.com")
    assert verify(api, owner, email["id"], code_of(owner, email["id"])).status == 200
    path = at(owner, email["id"])
    relabelled = api.call(
        "replace_contact_method", owner, path, body=method("email", "ada@example.com", label="X")
    )
    assert relabelled.body["contact_method"]["verified"] is True, "same address: still verified"
    moved = api.call("replace_contact_method", owner, path, body=method("email", "ada@example.org"))
    assert moved.body["contact_method"]["verified"] is False
    message = pending_verification_message(
        runtime.store(), owner.account_id, owner.user_id, email["id"]
    )
    assert message is not None
    assert (message.to, message.subject) == ("ada@example.org", "Your verification code")


def test_a_profile_s_first_save_makes_its_email_a_verified_method_with_a_rule(api: Api) -> None:
    account = new_id("acct")
    for name in ("Ada", "Bob"):  # the owner's first save, and another user's
        who = Caller(account, new_id("user"))
        body = {"name": name, "email": f"{name.lower()}@example.com"}
        assert api.call("save_profile", who, body=body).status == 200
        assert api.call("save_profile", who, body={**body, "name": f"{name} L."}).status == 200
        methods = api.call("list_contact_methods", who, {"user_id": who.user_id}).body
        (email,) = methods["contact_methods"]
        assert (email["type"], email["label"], email["address"], email["verified"]) == (
            "email_contact_method", "Default", f"{name.lower()}@example.com", True,
        )  # fmt: skip
        rules = api.call("list_notification_rules", who, {"user_id": who.user_id}).body
        assert [
            (r["start_delay_in_minutes"], r["urgency"], r["contact_method"], r["type"])
            for r in rules["notification_rules"]
        ] == [
            (0, "high", {"id": email["id"], "type": "email_contact_method_reference"},
             "assignment_notification_rule"),
        ]  # fmt: skip
    no_email = new_api_user(api, account, "Cyd")
    empty = api.call("list_contact_methods", no_email, {"user_id": no_email.user_id})
    assert (empty.status, empty.body) == (200, {"contact_methods": []})


def test_rules_name_the_user_s_own_methods_and_go_with_them(api: Api, owner: Caller) -> None:
    sms = added(api, owner, "sms", NUMBER)
    users = {"user_id": owner.user_id}
    made = api.call("create_notification_rule", owner, users, body=rule(sms["id"], "sms", 5))
    assert made.status == 201, made.body
    shown = made.body["notification_rule"]
    assert shown["contact_method"] == {"id": sms["id"], "type": "sms_contact_method_reference"}
    plain = {"id": sms["id"], "type": "sms_contact_method"}
    body = {"notification_rule": {**rule(sms["id"])["notification_rule"], "contact_method": plain}}
    second = api.call("create_notification_rule", owner, users, body=body)
    assert second.status == 201, "the type's plain name is taken too"
    path = {**users, "notification_rule_id": shown["id"]}
    changed = api.call(
        "replace_notification_rule", owner, path, body=rule(sms["id"], "sms", 1440, "low")
    )
    assert (changed.body["notification_rule"]["start_delay_in_minutes"],
            changed.body["notification_rule"]["urgency"]) == (1440, "low")  # fmt: skip
    assert api.call("get_notification_rule", owner, path).body == changed.body
    for bad, status in (
        (rule(sms["id"], "sms", 1441), 400),
        (rule(sms["id"], "sms", -1), 400),
        (rule(sms["id"], "phone"), 400),
        (rule(sms["id"], "sms", urgency="medium"), 400),
        (rule(f"cm_{'0' * 27}", "sms"), 404),
    ):
        reply = api.call("create_notification_rule", owner, users, body=bad)
        assert reply.status == status, (bad, reply.body)
    bob = new_api_user(api, owner.account_id, "Bob")
    bobs = added(api, bob, "sms", NUMBER)
    foreign = api.call("create_notification_rule", owner, users, body=rule(bobs["id"], "sms"))
    assert foreign.status == 404, "another user's method is none of mine"
    assert api.call("delete_contact_method", owner, at(owner, sms["id"])).status == 204
    left = api.call("list_notification_rules", owner, users).body["notification_rules"]
    assert left == [], "PagerDuty's rule: a method's rules go with it"
    assert api.call("delete_notification_rule", owner, path).status == 404


def test_the_paging_engine_reads_only_enabled_verified_methods_by_delay(
    api: Api, owner: Caller, clock: WallClock
) -> None:
    users = {"user_id": owner.user_id}
    sms, phone, paused = (added(api, owner, kind, NUMBER) for kind in ("sms", "phone", "sms"))
    unverified = added(api, owner, "email", "ada@example.com")
    for made in (sms, phone, paused):
        assert verify(api, owner, made["id"], code_of(owner, made["id"])).status == 200
    body = method("sms", NUMBER, enabled=False)
    api.call("replace_contact_method", owner, at(owner, paused["id"]), body=body)
    for target, kind, delay, urgency in (
        (phone, "phone", 10, "high"), (sms, "sms", 0, "high"), (sms, "sms", 3, "low"),
        (paused, "sms", 1, "high"), (unverified, "email", 2, "high"),
    ):  # fmt: skip
        reply = api.call(
            "create_notification_rule", owner, users, body=rule(target["id"], kind, delay, urgency)
        )
        assert reply.status == 201, reply.body
    high = deliverable_methods(runtime.store(), owner.account_id, owner.user_id, Urgency.HIGH)
    assert [(d.rule.start_delay_in_minutes, d.method.id) for d in high] == [
        (0, sms["id"]), (10, phone["id"]),
    ]  # fmt: skip
    low = deliverable_methods(runtime.store(), owner.account_id, owner.user_id, Urgency.LOW)
    assert [(d.rule.start_delay_in_minutes, d.method.address) for d in low] == [(3, NUMBER)]


def test_a_person_manages_only_their_own_and_admins_read_others(api: Api, owner: Caller) -> None:
    bob, cyd = (new_api_user(api, owner.account_id, name) for name in ("Bob", "Cyd"))
    bobs = added(api, bob, "sms", NUMBER)
    users = {"user_id": bob.user_id}
    for who in (cyd, owner):
        refused = add(api, who, method("sms", NUMBER), user=bob)
        assert (refused.status, refused.body["code"]) == (403, "forbidden")
        assert "their own" in refused.body["message"]
        for name, body in (
            ("delete_contact_method", None), ("verify_contact_method", {"code": "123456"}),
            ("send_contact_method_verification", None),
            ("replace_contact_method", method("sms", NUMBER)),
        ):  # fmt: skip
            reply = api.call(name, who, at(bob, bobs["id"]), body=body)
            assert reply.status == 403, (name, reply.body)
        made = api.call("create_notification_rule", who, users, body=rule(bobs["id"], "sms"))
        assert made.status == 403
    for name in ("list_contact_methods", "list_notification_rules"):
        assert api.call(name, cyd, users).status == 403, "a user reads only their own"
    assert api.call("get_contact_method", cyd, at(bob, bobs["id"])).status == 403
    promoted = api.call("update_user", owner, {"user_id": cyd.user_id}, body={"role": "admin"})
    assert promoted.status == 200
    for who in (cyd, owner):  # an admin, and the owner, read anyone's
        listed = api.call("list_contact_methods", who, users)
        assert [m["id"] for m in listed.body["contact_methods"]] == [bobs["id"]]
        assert api.call("get_contact_method", who, at(bob, bobs["id"])).status == 200
        assert api.call("list_notification_rules", who, users).status == 200
    nobody = {"user_id": new_id("user")}
    assert api.call("list_contact_methods", owner, nobody).status == 404


def key_call(api: Api, key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """One request with an API key, through the authorizer as a machine sends it."""
    gateway = LocalGateway(api.handlers, {})
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    raw = json.dumps(body).encode() if body is not None else b""
    status, _, payload = gateway.respond(method, path, headers, raw)
    return status, json.loads(payload) if payload else None


def new_key(api: Api, who: Caller, *scopes: str) -> str:
    reply = api.call("create_api_key", who, body={"name": "ops", "scopes": list(scopes)})
    assert reply.status == 201, reply.body
    return str(reply.body["key"])


def test_api_keys_need_users_manage(api: Api, owner: Caller) -> None:
    methods = f"/users/{owner.user_id}/contact-methods"
    without = new_key(api, owner, "teams:read", "teams:write", "schedules:manage")
    for verb, path, body in (
        ("GET", methods, None), ("POST", methods, method("sms", NUMBER)),
        ("GET", f"/users/{owner.user_id}/notification-rules", None),
    ):  # fmt: skip
        status, refused = key_call(api, without, verb, path, body)
        assert (status, refused["message"]) == (403, "this API key lacks the scope users:manage")
    scoped = new_key(api, owner, "users:manage")
    status, made = key_call(api, scoped, "POST", methods, method("sms", NUMBER))
    assert status == 201, "a key manages any user's of its account"
    status, listed = key_call(api, scoped, "GET", methods)
    assert [m["id"] for m in listed["contact_methods"]] == [made["contact_method"]["id"]]


def test_nothing_crosses_accounts(api: Api, owner: Caller) -> None:
    owners = added(api, owner, "sms", NUMBER)
    mallory = new_api_user(api, new_id("acct"), "Mallory")
    users = {"user_id": owner.user_id}
    for name, path in (
        ("list_contact_methods", users), ("list_notification_rules", users),
        ("get_contact_method", at(owner, owners["id"])),
    ):  # fmt: skip
        reply = api.call(name, mallory, path)
        assert reply.status == 404, "her account (she owns it) has no such user"
    outsider = new_key(api, mallory, "users:manage")
    methods = f"/users/{owner.user_id}/contact-methods"
    assert key_call(api, outsider, "GET", methods)[0] == 404
    assert key_call(api, outsider, "GET", f"{methods}/{owners['id']}")[0] == 404
    assert key_call(api, outsider, "POST", methods, method("sms", NUMBER))[0] == 404
    same_id = Caller(mallory.account_id, owner.user_id)  # an id taken from another account
    assert api.call("list_contact_methods", same_id, users).status == 404
    assert add(api, same_id, method("sms", NUMBER)).status == 404
    mine = api.call("list_contact_methods", owner, users).body["contact_methods"]
    assert [m["id"] for m in mine] == [owners["id"]]


def test_a_user_holds_at_most_20_methods_and_20_rules(api: Api) -> None:
    who = Caller(new_id("acct"), new_id("user"))
    saved = api.call("save_profile", who, body={"name": "Ada", "email": "ada@example.com"})
    assert saved.status == 200  # its email method and rule count: 19 more of each
    users = {"user_id": who.user_id}
    made = [added(api, who, "sms", f"+141555526{n:02d}") for n in range(19)]  # 5 codes a number
    over = add(api, who, method("sms", NUMBER))
    assert (over.status, over.body["code"]) == (409, "limit_reached")
    assert over.body["message"] == "a user holds at most 20 contact methods; delete one first"
    for _ in range(19):
        reply = api.call("create_notification_rule", who, users, body=rule(made[0]["id"], "sms"))
        assert reply.status == 201, reply.body
    over = api.call("create_notification_rule", who, users, body=rule(made[1]["id"], "sms"))
    assert (over.status, over.body["code"]) == (409, "limit_reached")
    assert "20 notification rules" in over.body["message"]
    assert api.call("delete_contact_method", who, at(who, made[0]["id"])).status == 204
    assert added(api, who, "sms", NUMBER)["verified"] is False, "a delete frees a place"
    again = api.call("create_notification_rule", who, users, body=rule(made[1]["id"], "sms"))
    assert again.status == 201, "and its rules' places with it"
