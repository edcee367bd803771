"""The suites' webhook receiver keeps only what was sent to it: a delivery to another path on
its port (owed to an earlier receiver the port belonged to) is answered 404 and not kept."""

from __future__ import annotations

import urllib.error
import urllib.request
from urllib.parse import urlsplit

from local.webhook_receiver import Receiver, serving


def post(url: str) -> int:
    request = urllib.request.Request(url, data=b"{}", method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_a_delivery_to_another_path_is_refused_and_not_kept() -> None:
    receiver = Receiver(secrets=[])
    with serving(receiver) as url:
        other = url.rsplit("/", 1)[0] + "/someone-else"
        assert post(other) == 404
        assert receiver.received == []
        assert post(url) == 401  # its own path: kept, and refused for its signature
    assert [got.verified for got in receiver.received] == [False]


def test_receivers_listen_on_paths_of_their_own() -> None:
    first, second = Receiver(secrets=[]), Receiver(secrets=[])
    with serving(first) as one, serving(second) as two:
        assert urlsplit(one).path != urlsplit(two).path


def test_the_command_line_receiver_answers_on_any_path() -> None:
    receiver = Receiver(secrets=[], path=None)
    with serving(receiver) as url:
        assert url.endswith("/hooks")
        assert post(url.replace("/hooks", "/anything")) == 401
