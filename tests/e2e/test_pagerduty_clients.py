"""PagerDuty's own Events API v2 clients, installed from PyPI (pinned) and used unchanged:
given ``make dev``'s URL as their base, they post to ``/v2/enqueue`` with the integration
key as ``routing_key`` and read the ``dedup_key`` of the answer. Each triggers (with and
without a key of its own), joins, acknowledges, resolves and opens the key's next incident,
and the API shows each step. The official client takes only an ``https://`` base URL, so
it reaches the API through a TLS front whose test CA it is told to trust."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pagerduty
import pdpyras
import pytest

from tests.e2e.conftest import LocalApi
from tests.helpers.https_front import https_front

pytestmark = pytest.mark.integration
ACCOUNT = 0
Client = Any
"""Either client: both have trigger (with their own arguments), acknowledge and resolve."""


Front = tuple[str, ssl.SSLContext]
"""An HTTPS URL of the local API, and a context that trusts it."""


@pytest.fixture(scope="module")
def https(local_api: LocalApi) -> Iterator[Front]:
    with https_front(local_api.url) as front:
        yield front


def pdpyras_client(api: LocalApi, key: str, _: Front) -> tuple[Client, Callable[..., str]]:
    session = pdpyras.EventsAPISession(key)
    session.url = api.url
    return session, lambda summary, dedup_key=None: session.trigger(
        summary, "db-1", dedup_key=dedup_key
    )


def official_client(_: LocalApi, key: str, https: Front) -> tuple[Client, Callable[..., str]]:
    """The official client takes only an https:// base URL: `https_front`'s, trusted
    through the client's own ``verify`` (what a private CA needs anyway)."""
    url, trusted = https
    client = pagerduty.EventsApiV2Client(key, base_url=url, verify=trusted)
    return client, lambda summary, dedup_key=None: client.trigger(
        summary, "db-1", dedup_key=dedup_key
    )


@pytest.mark.parametrize("make", [pdpyras_client, official_client], ids=["pdpyras", "pagerduty"])
def test_pagerduty_clients_drive_an_incident_by_its_dedup_key(
    local_api: LocalApi,
    make: Callable[[LocalApi, str, Front], tuple[Client, Callable[..., str]]],
    https: Front,
) -> None:
    token = local_api.token(ACCOUNT, 0)
    status, integration = local_api.request(
        "POST", "/integrations", token, {"name": f"PagerDuty SDK {make.__name__}"}
    )
    assert status == 201, integration
    client, trigger = make(local_api, integration["key"], https)

    def incident(dedup_key: str) -> dict[str, Any]:
        """The key's open incident (its title is the trigger's summary), or {}."""
        status, body = local_api.request("GET", "/incidents?state=OPEN&limit=100", token)
        assert status == 200, body
        found = [item for item in body["items"] if item["title"] == f"disk full {dedup_key}"]
        assert len(found) <= 1, found
        return found[0] if found else {}

    generated = trigger("disk 95% full, generated key")
    assert generated, "a key generated when the trigger has none"
    dedup_key = f"db-1/disk/{make.__name__}"
    assert trigger(f"disk full {dedup_key}", dedup_key) == dedup_key
    first = incident(dedup_key)
    assert first["status"] == "TRIGGERED"
    assert trigger(f"disk still full {dedup_key}", dedup_key) == dedup_key  # joins it
    assert client.acknowledge(dedup_key) == dedup_key
    assert incident(dedup_key)["status"] == "ACKNOWLEDGED"
    assert client.resolve(dedup_key) == dedup_key
    assert incident(dedup_key) == {}, "resolved: no longer open"
    assert trigger(f"disk full {dedup_key}", dedup_key) == dedup_key
    reopened = incident(dedup_key)
    assert reopened["id"] != first["id"], "the key's next incident"
    status, alerts = local_api.request("GET", f"/incidents/{first['id']}/alerts", token)
    assert (status, alerts["alerts"]) == (200, 2), "opened and joined"


def test_pagerduty_clients_send_change_events_to_the_change_log(
    local_api: LocalApi, https: Front
) -> None:
    """Each client's change event (``/v2/change/enqueue``) is kept in the account's change
    log, and opens nothing."""
    token = local_api.token(ACCOUNT, 0)
    status, integration = local_api.request("POST", "/integrations", token, {"name": "CD"})
    assert status == 201, integration
    key = integration["key"]
    session = pdpyras.ChangeEventsAPISession(key)
    session.url = local_api.url
    session.submit("deployed checkout 4812 (pdpyras)", source="argo")
    url, trusted = https
    official = pagerduty.EventsApiV2Client(key, base_url=url, verify=trusted)
    official.send_change_event(payload={"summary": "deployed checkout 4813 (pagerduty)"})
    status, listed = local_api.request("GET", "/changes?limit=100", token)
    assert status == 200, listed
    mine = [c["summary"] for c in listed["items"] if c["integration_id"] == integration["id"]]
    assert mine == ["deployed checkout 4813 (pagerduty)", "deployed checkout 4812 (pdpyras)"]
