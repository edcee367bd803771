"""``make dev``'s demo page link: one page of the demo incident to the first demo user, so
the link routes' examples open, and act through, a real link. Made afresh at each start (a
link acts once)."""

from __future__ import annotations

from incidents.contacts.models import Channel
from incidents.keys import page_sort_key
from incidents.models import timestamp
from incidents.notifications.decisions import Notification
from incidents.notifications.links import Links
from incidents.store import Store, new_id
from local.demo.data import DemoAccount


def demo_link(store: Store, account: DemoAccount, incident_id: str, secret: bytes) -> str:
    """The token of a new link of the first demo user's to `incident_id`, made with the
    stage's `secret` as the sender makes them."""
    me = account.users[0]
    now = timestamp(store.clock())
    notification = Notification(
        account_id=account.account_id,
        incident_id=incident_id,
        page=page_sort_key(1, 0, 1, me.id),
        user_id=me.id,
        rule_id=new_id("nr"),
        contact_method_id=new_id("cm"),
        channel=Channel.EMAIL,
        to=me.email or "",
        decided_at=now,
        paged_at=now,
    )
    url = Links.of("", secret).issue(store, notification)
    assert url is not None, "an email carries a link"
    return url.rsplit("/", 1)[1]
