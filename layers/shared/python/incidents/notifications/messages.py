"""What a page says, on each channel: the incident's number, title and severity first (a
lock screen shows a line), then why this person is paged."""

from __future__ import annotations

from datetime import timedelta

from incidents.contacts.messages import OutgoingMessage
from incidents.contacts.models import Channel
from incidents.items import deserialize
from incidents.models import parse_timestamp, timestamp
from incidents.notifications.decisions import Notification
from incidents.store import Store
from incidents.summaries import read_summary

PURPOSE = "page"
SUBJECTS = "[#{number}] {severity}: {title}"
BODIES = {
    Channel.EMAIL: (
        "Incident #{number} is {status}: {title}\n\nSeverity {severity}. You are paged at "
        "level {level} of its escalation policy.\n\nIncident id: {incident_id}\n"
    ),
    Channel.SMS: "#{number} {severity} {status}: {title}",
    Channel.VOICE: "Incident {number}, severity {severity}: {title}. You are paged.",
    Channel.SLACK: (
        ":rotating_light: *#{number} {title}* is {status} (severity {severity}); "
        "you are paged at level {level}. `{incident_id}`"
    ),
}
LINK_LINES = {
    Channel.EMAIL: "\nAcknowledge or resolve it: {link}\n",
    Channel.SMS: " {link}",
    Channel.SLACK: " <{link}|Acknowledge or resolve>",
}
"""How each channel carries the page's link (`incidents.notifications.links`)."""
UNKNOWN_TITLE = "(incident deleted)"
STALE_AFTER = timedelta(minutes=15)
"""A page not sent by then is failed, not sent late: its level has escalated past it (a
level waits at least a minute, a loop of levels far less than this)."""


def page_message(
    store: Store, notification: Notification, link: str | None = None
) -> OutgoingMessage:
    """The message `notification` sends, with the incident as it is now (and its `link`,
    if it has one: its channel says where)."""
    found = read_summary(store, notification.account_id, notification.incident_id)
    summary = deserialize(found) if found is not None else {}
    level = int(notification.page.split("#")[3])
    words = {
        "number": summary.get("number", "?"),
        "title": summary.get("title", UNKNOWN_TITLE),
        "severity": summary.get("severity", "?"),
        "status": summary.get("status", "?"),
        "level": level,
        "incident_id": notification.incident_id,
    }
    channel = notification.channel
    if channel is Channel.SLACK:  # Slack reads <…> as links and mentions (<!channel>)
        words = {name: _slack_escaped(value) for name, value in words.items()}
    return OutgoingMessage(
        account_id=notification.account_id,
        channel=channel,
        to=notification.to,
        subject=SUBJECTS.format(**words) if channel is Channel.EMAIL else None,
        body=BODIES[channel].format(**words)
        + (LINK_LINES[channel].format(link=link) if link is not None else ""),
        user_id=notification.user_id,
        contact_method_id=notification.contact_method_id,
        expires_at=timestamp(parse_timestamp(notification.paged_at) + STALE_AFTER),
        purpose=PURPOSE,
    )


def _slack_escaped(value: object) -> object:
    """`value` as Slack shows text literally: ``&``, ``<`` and ``>`` escaped."""
    if not isinstance(value, str):
        return value
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
