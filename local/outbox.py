"""``make dev``'s outbox: every page emailed so far, as moto's SES v2 kept it (it delivers
none), newest first: an HTML table for people at ``/outbox``, and JSON for a client that
asks for ``application/json``. Local only: the deployed API has no such route."""

from __future__ import annotations

import html
import json
import os
import re
from typing import Any

import requests

from local.events.messaging import PAGE_SENDER

INCIDENT_ID = re.compile(r"\binc_[0-9A-Za-z]{27}\b")
TIMEOUT_SECONDS = 5


def outbox_messages() -> list[dict[str, Any]]:
    """The pages sent by email, newest first: channel, to, subject, body, incident id."""
    endpoint = os.environ["AWS_ENDPOINT_URL_SESV2"]
    state = requests.get(f"{endpoint}/moto-api/data.json", timeout=TIMEOUT_SECONDS).json()
    sent = [m for m in state.get("ses", {}).get("Message", []) if m["source"] == PAGE_SENDER]
    return [
        {
            "channel": "email",
            "to": ", ".join(message["destinations"].get("ToAddresses", [])),
            "subject": message["subject"],
            "body": message["body"],
            "incident_id": _incident(message["body"]),
            "message_id": message["id"],
            "status": "sent",
        }
        for message in reversed(sent)
    ]


def outbox_page(messages: list[dict[str, Any]], wants_json: bool) -> tuple[str, bytes]:
    """The outbox as (content type, body)."""
    if wants_json:
        return "application/json", json.dumps({"items": messages}).encode()
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(m[k] or ''))}</td>" for k in COLUMNS) + "</tr>"
        for m in messages
    )
    head = "".join(f"<th>{name}</th>" for name in COLUMNS)
    page = (
        "<!doctype html><html lang=en><meta charset=utf-8><title>Outbox</title>"
        "<style>body{font-family:sans-serif}td{white-space:pre-wrap;vertical-align:top;"
        "border-top:1px solid #ccc;padding:4px}</style>"
        f"<h1>Outbox: {len(messages)} pages sent</h1>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></html>"
    )
    return "text/html; charset=utf-8", page.encode()


COLUMNS = ("channel", "to", "subject", "body", "incident_id", "status")
"""What the HTML table shows of each message."""


def _incident(body: str) -> str | None:
    found = INCIDENT_ID.search(body)
    return found.group(0) if found else None
