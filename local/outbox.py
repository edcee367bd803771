"""``make dev``'s outbox: every message to a person so far (pages and verification codes), as
moto's SES v2 kept the emails, the End User Messaging stand-in the texts and calls and the
Slack stand-in the Slack messages (they deliver none), each channel's newest first: an
HTML table for people at ``/outbox``, and JSON for a client that asks for
``application/json``. Local only: the deployed API has no such route."""

from __future__ import annotations

import html
import json
import os
import re
from typing import Any

import requests

from local.engines.slack import MESSAGES_PATH as SLACK_MESSAGES
from local.engines.sms_voice import MESSAGES_PATH
from local.events.messaging import PAGE_SENDER

INCIDENT_ID = re.compile(r"\binc_[0-9A-Za-z]{27}\b")
ACK_URL = re.compile(r"https?://[^\s<>|]+/page-links/[A-Za-z0-9_-]{22}")
"""A page's link in a message's body (`incidents.notifications.links`)."""
TIMEOUT_SECONDS = 5


def outbox_messages() -> list[dict[str, Any]]:
    """The messages sent, emails, then texts and calls, then Slack's, each newest first
    (moto keeps no time of an email): channel, to, subject, body, incident id, the page's link."""
    emails = _get(os.environ["AWS_ENDPOINT_URL_SESV2"], "/moto-api/data.json")
    texts = _get(os.environ["AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2"], MESSAGES_PATH)
    sent = [
        {
            "channel": "email",
            "to": ", ".join(message["destinations"].get("ToAddresses", [])),
            "subject": message["subject"],
            "body": message["body"],
            "message_id": message["id"],
        }
        for message in reversed(emails.get("ses", {}).get("Message", []))
        if message["source"] == PAGE_SENDER
    ]
    posted = _get(os.environ["AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2"], SLACK_MESSAGES)
    sent += [
        {"subject": None} | {key: message[key] for key in ("channel", "to", "body", "message_id")}
        for message in [*reversed(texts["messages"]), *reversed(posted["messages"])]
    ]
    return [{**m, "incident_id": _found(INCIDENT_ID, m["body"]),
             "ack_url": _found(ACK_URL, m["body"]), "status": "sent"} for m in sent]  # fmt: skip


def _get(endpoint: str, path: str) -> dict[str, Any]:
    answer: dict[str, Any] = requests.get(f"{endpoint}{path}", timeout=TIMEOUT_SECONDS).json()
    return answer


def outbox_page(messages: list[dict[str, Any]], wants_json: bool) -> tuple[str, bytes]:
    """The outbox as (content type, body)."""
    if wants_json:
        return "application/json", json.dumps({"items": messages}).encode()
    rows = "".join(
        "<tr>" + "".join(f"<td>{_cell(m, k)}</td>" for k in COLUMNS) + "</tr>" for m in messages
    )
    head = "".join(f"<th>{name}</th>" for name in COLUMNS)
    page = (
        "<!doctype html><html lang=en><meta charset=utf-8><title>Outbox</title>"
        "<style>body{font-family:sans-serif}td{white-space:pre-wrap;vertical-align:top;"
        "border-top:1px solid #ccc;padding:4px}</style>"
        f"<h1>Outbox: {len(messages)} messages sent</h1>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></html>"
    )
    return "text/html; charset=utf-8", page.encode()


COLUMNS = ("channel", "to", "subject", "body", "incident_id", "ack_url", "status")
"""What the HTML table shows of each message."""


def _cell(message: dict[str, Any], column: str) -> str:
    """One cell, escaped; the page's link a link to follow."""
    text = html.escape(str(message[column] or ""))
    return f'<a href="{text}">acknowledge or resolve</a>' if column == "ack_url" and text else text


def _found(pattern: re.Pattern[str], body: str) -> str | None:
    found = pattern.search(body)
    return found.group(0) if found else None
