"""A page's link acknowledges or resolves its incident from the message, without signing
in: through the real handler, on DynamoDB Local. Opening it shows the incident and acts on
nothing; its form acts once, as the person paged; a replayed, forged, expired or raced
link gets a page that says so, and no action."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from incidents.contacts.models import Channel
from incidents.keys import page_sort_key
from incidents.models import timestamp
from incidents.notifications.decisions import Notification
from incidents.notifications.links import LIFETIME, Links
from incidents.store import Caller, new_id
from lambdas import runtime
from tests.helpers.api_harness import Api, Reply
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration
BASE = "https://api.example.com/prod"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
SECRET = b"page-links-tests-secret-0123456789abcdef"


def paged(api: Api, title: str = "disk full", *, hours_ago: float = 0) -> tuple[Caller, str, str]:
    """A person, an incident of theirs and the token of a link of a page to them (paged
    `hours_ago`)."""
    bob = new_api_user(api, new_id("acct"), "Bob")
    incident = api.call("create_incident", bob, body={"title": title}).body["summary"]["id"]
    paged_at = timestamp(datetime.now(UTC) - timedelta(hours=hours_ago))
    notification = Notification(
        account_id=bob.account_id,
        incident_id=incident,
        page=page_sort_key(1, 0, 1, bob.user_id),
        user_id=bob.user_id,
        rule_id=new_id("nr"),
        contact_method_id=new_id("cm"),
        channel=Channel.EMAIL,
        to="bob@example.com",
        decided_at=paged_at,
        paged_at=paged_at,
    )
    url = Links.of(BASE, SECRET).issue(runtime.store(), notification)
    assert url is not None
    assert url.startswith(f"{BASE}/page-links/")
    return bob, incident, url.rsplit("/", 1)[1]


def status_of(api: Api, who: Caller, incident: str) -> str:
    reply = api.call("get_incident", who, {"incident_id": incident})
    return str(reply.body["summary"]["status"])


def act(api: Api, token: str, action: str) -> Reply:
    return api.call("use_page_link", None, {"token": token}, raw_body=f"action={action}",
                    headers=FORM)  # fmt: skip


def test_opening_a_link_shows_the_incident_and_acts_on_nothing(api: Api) -> None:
    bob, incident, token = paged(api, "<script>alert(1)</script> & more")
    for _ in range(2):  # a mail scanner opened it first
        shown = api.call("page_link", None, {"token": token})
        assert shown.status == 200
        assert shown.headers["Content-Type"].startswith("text/html")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in shown.text
    assert "<script>" not in shown.text, "the title is text, never markup"
    assert 'value="acknowledge"' in shown.text
    assert 'value="resolve"' in shown.text
    assert shown.headers["X-Frame-Options"] == "DENY", "a framed button is a stolen click"
    assert shown.headers["Referrer-Policy"] == "no-referrer", "the URL is a credential"
    assert shown.headers["Cache-Control"] == "no-store"
    assert "frame-ancestors 'none'" in shown.headers["Content-Security-Policy"]
    assert "RateLimit" in shown.headers, "its account's quota was drawn"
    assert status_of(api, bob, incident) == "TRIGGERED"


def test_a_link_acknowledges_once_as_the_person_paged(api: Api) -> None:
    bob, incident, token = paged(api)
    done = act(api, token, "acknowledge")
    assert done.status == 200, done.text
    assert "acknowledged" in done.text
    assert status_of(api, bob, incident) == "ACKNOWLEDGED"
    timeline = api.call("incident_timeline", bob, {"incident_id": incident}).body["items"]
    (change,) = [e for e in timeline if e["type"] == "incident.updated"]
    assert change["actor"] == {"user_id": bob.user_id}, "the change is the paged person's"
    replayed = act(api, token, "resolve")
    assert replayed.status == 410
    assert "used" in replayed.text
    assert status_of(api, bob, incident) == "ACKNOWLEDGED", "a replay acts on nothing"
    assert api.call("page_link", None, {"token": token}).status == 410, "it says it was used"


@pytest.mark.parametrize(("action", "status"), [("acknowledge", "ACKNOWLEDGED"),
                                                ("resolve", "RESOLVED")])  # fmt: skip
def test_raced_clicks_act_once(api: Api, action: str, status: str) -> None:
    """Eight taps at once (a second acknowledge changes nothing, so only the link's own
    condition keeps it to one)."""
    bob, incident, token = paged(api)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: act(api, token, action).status, range(8)))
    assert sorted(answers) == [200] + [410] * 7
    assert status_of(api, bob, incident) == status


@pytest.mark.parametrize("token", ["A" * 22, "Zm9vYmFyYmF6cXV4cXV1eA", "short", "x" * 200, "..%2E"])
def test_a_forged_or_malformed_link_gets_a_page_not_an_action(api: Api, token: str) -> None:
    for reply in (api.call("page_link", None, {"token": token}), act(api, token, "resolve")):
        assert reply.status == 404
        assert reply.headers["Content-Type"].startswith("text/html")
        assert "Unknown link" in reply.text


def test_an_expired_link_says_so_and_acts_on_nothing(api: Api) -> None:
    hours = LIFETIME / timedelta(hours=1) + 1
    bob, incident, token = paged(api, hours_ago=hours)
    refused = act(api, token, "acknowledge")
    assert refused.status == 410
    assert "expired" in refused.text
    assert status_of(api, bob, incident) == "TRIGGERED"


def test_a_resolved_incident_is_not_reopened_and_the_link_is_kept(api: Api) -> None:
    bob, incident, token = paged(api)
    api.call("resolve_incident", bob, {"incident_id": incident})
    refused = act(api, token, "acknowledge")
    assert refused.status == 410
    assert "nothing to acknowledge" in refused.text
    assert status_of(api, bob, incident) == "RESOLVED"
    assert act(api, token, "resolve").status == 200, "it is resolved, as asked"
    assert act(api, token, "resolve").status == 200, "and the link was not spent on it"
    shown = api.call("page_link", None, {"token": token})
    assert shown.status == 200
    assert "<button" not in shown.text, "nothing left to do"


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        ("action=acknowledge", {"Content-Type": "application/json"}, 415),
        ("action=snooze", FORM, 400),
        ("", FORM, 400),
        ("action=acknowledge&action=resolve", FORM, 400),
        ("action=acknowledge&also=1", FORM, 400),
        ("a=1&" * 600 + "action=acknowledge", FORM, 400),
    ],
)
def test_a_form_without_one_known_action_does_nothing(
    api: Api, body: str, headers: dict[str, str], status: int
) -> None:
    bob, incident, token = paged(api)
    reply = api.call("use_page_link", None, {"token": token}, raw_body=body, headers=headers)
    assert reply.status == status
    assert reply.headers["Content-Type"].startswith("text/html")
    assert status_of(api, bob, incident) == "TRIGGERED"
    assert act(api, token, "acknowledge").status == 200, "the link was not spent"


def test_a_link_asking_for_what_is_so_already_is_kept_for_what_is_left(api: Api) -> None:
    """Acknowledged by someone else meanwhile: the link's acknowledge says so and stays
    unspent, so the person can still resolve from it."""
    bob, incident, token = paged(api)
    api.call("update_incident", bob, {"incident_id": incident}, body={"status": "ACKNOWLEDGED"})
    assert act(api, token, "acknowledge").status == 200
    shown = api.call("page_link", None, {"token": token})
    assert 'value="resolve"' in shown.text
    assert 'value="acknowledge"' not in shown.text
    assert act(api, token, "resolve").status == 200
    assert status_of(api, bob, incident) == "RESOLVED"


def test_a_used_or_expired_link_shows_no_incident(api: Api) -> None:
    _, _, used = paged(api, "the secret title")
    act(api, used, "resolve")
    _, _, expired = paged(api, "the secret title", hours_ago=LIFETIME / timedelta(hours=1) + 1)
    for token in (used, expired):
        shown = api.call("page_link", None, {"token": token})
        assert shown.status == 410
        assert "secret title" not in shown.text
        assert "<button" not in shown.text
