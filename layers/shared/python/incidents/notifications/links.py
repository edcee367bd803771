"""A page's link: acknowledge or resolve the incident from the message itself, without
signing in (PagerDuty's email buttons, GoAlert's SMS replies).

A link's token is a MAC of its notification under the stage's secret: every try of one
notification carries the same link, and nobody without the secret can make one. The table
keeps only the token's digest, in a lookup item outside any account (the token is all a
phone sends), found by one point read. A link acts once, as the person paged: its use is a
condition of the incident's change, in the same transaction. It expires `LIFETIME` after
its page; its item stays `KEPT` longer, so a late click is told "expired", not "unknown".
Opening a link only shows it: mail scanners and chat unfurlers fetch every URL they see,
so only a POST acts."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict

from incidents.access.secret_keys import digest, lookup_key
from incidents.contacts.models import Channel
from incidents.errors import DomainError, NotFoundError, VersionConflictError
from incidents.incident.commands import load_summary, update_incident
from incidents.items import from_item, serialize
from incidents.models import IncidentSummary, Status, parse_timestamp, timestamp
from incidents.notifications.decisions import Notification
from incidents.requests import UpdateIncident
from incidents.store import Caller, Store, condition_failed, labelled
from incidents.table import PK, SK, TABLE_SCHEMA

LIFETIME = timedelta(hours=24)
KEPT = timedelta(days=7)
KIND = "pagelink"
TOKEN = r"^[A-Za-z0-9_-]{22}$"
_TOKEN = re.compile(TOKEN)
ATTEMPTS = 3
"""Tries of an action that keeps losing races to other changes of its incident."""
PATH = "/page-links/{token}"
"""Where a link points, below the API's URL."""


class Action(StrEnum):
    """What a link can do to its incident."""

    ACKNOWLEDGE = "acknowledge"
    RESOLVE = "resolve"


STATUS_OF = {Action.ACKNOWLEDGE: Status.ACKNOWLEDGED, Action.RESOLVE: Status.RESOLVED}


class LinkNotFoundError(NotFoundError):
    """No such link: never made, mistyped or forged."""

    def __init__(self) -> None:
        super().__init__("this link is not one this service sent (mistyped, or made up)")


class LinkExpiredError(DomainError):
    """The link's time is over."""

    code = "link_expired"


class LinkUsedError(DomainError):
    """The link acted already (it acts once)."""

    code = "link_used"


class PageLink(BaseModel):
    """What a link is bound to, and whether it was used."""

    model_config = ConfigDict(frozen=True)

    account_id: str
    incident_id: str
    user_id: str
    page: str
    rule_id: str
    expires_at: str
    used_at: str | None = None
    used_for: Action | None = None


def link_token(secret: bytes, notification: Notification) -> str:
    """The token of `notification`'s link: 16 bytes of a MAC of where it is."""
    where = "\0".join((KIND, notification.account_id, notification.incident_id,
                       notification.sort_key))  # fmt: skip
    mac = hmac.new(secret, where.encode(), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def record_link(store: Store, token: str, notification: Notification) -> None:
    """The lookup item of `notification`'s link, written once (a retry finds it there)."""
    expires = parse_timestamp(notification.paged_at) + LIFETIME
    link = PageLink(
        account_id=notification.account_id,
        incident_id=notification.incident_id,
        user_id=notification.user_id,
        page=notification.page,
        rule_id=notification.rule_id,
        expires_at=timestamp(expires),
    )
    values: dict[str, object] = {
        "Type": "page_link",
        **link.model_dump(mode="json", exclude_none=True),
        str(TABLE_SCHEMA.ttl_attribute): int((expires + KEPT).timestamp()),
    }
    try:
        store.client.put_item(
            TableName=store.table_name,
            Item={**lookup_key(KIND, digest(token)), **serialize(values)},
            ConditionExpression=f"attribute_not_exists({PK})",
        )
    except ClientError as error:
        if not condition_failed(error):
            raise


def read_link(store: Store, token: str, *, consistent: bool = False) -> PageLink:
    """The link of `token`; `LinkNotFoundError` for a token no notification was sent with
    (eventually consistent unless told: a link is written before its message is sent)."""
    if not _TOKEN.match(token):
        raise LinkNotFoundError
    where = lookup_key(KIND, digest(token))
    item = store.get(where[PK]["S"], where[SK]["S"], consistent=consistent)
    if item is None:
        raise LinkNotFoundError
    return from_item(PageLink, item)


def incident_of(store: Store, link: PageLink) -> IncidentSummary:
    """The link's incident as it is now (404 once it is deleted)."""
    return load_summary(store, _person(link), link.incident_id)


def use_link(store: Store, token: str, link: PageLink, action: Action) -> IncidentSummary:
    """`action` on the link's incident, as the person paged, spending the link in the
    change's transaction; `LinkUsedError` or `LinkExpiredError` if it cannot act. A resolved
    incident is not reopened by an acknowledge, and one already as asked is left so (the
    link stays unspent either way). A change that lost
    a race reads the link again: spent by the winner, it is used; else it acts again."""
    for _ in range(ATTEMPTS - 1):
        try:
            return _act(store, token, link, action)
        except VersionConflictError:
            link = read_link(store, token, consistent=True)
    return _act(store, token, link, action)


def _act(store: Store, token: str, link: PageLink, action: Action) -> IncidentSummary:
    now = store.clock()
    _raise_if_used(link)
    if now >= parse_timestamp(link.expires_at):
        raise LinkExpiredError(f"this link expired at {link.expires_at}")
    who = _person(link)
    current = load_summary(store, who, link.incident_id)
    if current.status is STATUS_OF[action] or current.status is Status.RESOLVED:
        _raise_if_used(read_link(store, token, consistent=True))  # by a tap racing this one
        if current.status is STATUS_OF[action]:
            return current  # what was asked for is so (not by this link, which stays unspent)
        raise LinkUsedError("the incident is resolved already: nothing to acknowledge")
    spend = {
        "Update": {
            "TableName": store.table_name,
            "Key": lookup_key(KIND, digest(token)),
            "UpdateExpression": "SET used_at = :now, used_for = :action",
            "ConditionExpression": "attribute_not_exists(used_at) AND expires_at > :now",
            "ExpressionAttributeValues": serialize({":now": timestamp(now),
                                                    ":action": action.value}),
        }
    }  # fmt: skip
    spent = LinkUsedError("this link was used meanwhile, or expired")
    return update_incident(
        store,
        who,
        link.incident_id,
        UpdateIncident(status=STATUS_OF[action]),
        also=[labelled(spend, spent)],
    )


def _raise_if_used(link: PageLink) -> None:
    if link.used_at is not None:
        raise LinkUsedError(f"this link was used at {link.used_at} ({link.used_for})")


def _person(link: PageLink) -> Caller:
    """Who the link acts as: the person paged, in the link's account."""
    return Caller(account_id=link.account_id, user_id=link.user_id)


LINKED = frozenset({Channel.EMAIL, Channel.SMS})
"""The channels whose messages carry a link: one person's inbox or phone (a call cannot
carry one, and a Slack channel is read by everyone in it, who would act as the person
paged)."""


@dataclass(frozen=True)
class Links:
    """Where a stage's links point (the API's public URL) and the secret they are made
    with (one derived from the stage's cursor secret, for this use alone)."""

    base_url: str
    secret: bytes

    @classmethod
    def of(cls, base_url: str, stage_secret: bytes) -> Links:
        """The links of an API at `base_url` whose stage's secret is `stage_secret`."""
        derived = hmac.new(stage_secret, KIND.encode(), hashlib.sha256).digest()
        return cls(base_url.rstrip("/"), derived)

    def issue(self, store: Store, notification: Notification) -> str | None:
        """The URL of `notification`'s link, recorded (None: its channel carries none)."""
        if notification.channel not in LINKED:
            return None
        token = link_token(self.secret, notification)
        record_link(store, token, notification)
        return self.base_url + PATH.format(token=token)
