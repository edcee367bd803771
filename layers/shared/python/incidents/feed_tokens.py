"""Calendar feeds' tokens: a feed's URL is its credential (calendar apps send no header), so
the token in it names its account and carries a secret, stored only as a digest beside the
feed's subject (a schedule or a user). Checked before anything is spent on the request."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from incidents.errors import NotFoundError
from incidents.items import deserialize
from incidents.keys import feed_sort_key, teams_partition
from incidents.models import FEED_TOKEN
from incidents.store import Store

_TOKEN = re.compile(FEED_TOKEN)


class FeedNotFoundError(NotFoundError):
    """No feed at this URL: a token never made, rotated away, or another subject's."""

    def __init__(self) -> None:
        super().__init__("no calendar feed at this URL (it may have been rotated)")


def new_token(account: str) -> tuple[str, str]:
    """A new token of `account`'s and the digest to store."""
    secret = secrets.token_urlsafe(24)
    return f"{account}.{secret}", digest(secret)


def digest(secret: str) -> str:
    """What is stored of a secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


def feed_account(store: Store, token: str, subject_id: str) -> str:
    """The token's account, if the token is the current one of `subject_id`'s feed (one
    point read, compared in constant time); `FeedNotFoundError` for anything else."""
    if not _TOKEN.match(token):
        raise FeedNotFoundError
    account, _, secret = token.partition(".")
    item = store.get(teams_partition(account), feed_sort_key(subject_id))
    stored = "" if item is None else str(deserialize(item)["secret_sha256"])
    if not hmac.compare_digest(stored, digest(secret)):
        raise FeedNotFoundError
    return account
