"""An account paging one person, Bob, for the paging tests: his methods and rules, an
incident paging him at level 1 through an integration, and the stream record of the page."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.models import ALERT_EVENTS, NewIntegration
from incidents.contacts.commands import (
    create_contact_method,
    create_notification_rule,
    verify_contact_method,
)
from incidents.contacts.messages import pending_verification_message
from incidents.contacts.models import (
    Channel,
    ContactMethodBody,
    NotificationRuleBody,
    Urgency,
    VerificationCode,
)
from incidents.escalation.engine import fire_escalation
from incidents.escalation.models import EscalationPolicyRequest
from incidents.escalation.policies import create_policy
from incidents.events_out.delivery_messages import NotificationJob
from incidents.events_out.endpoints import EndpointPolicy
from incidents.keys import PAGE_PREFIX, timer_key
from incidents.notifications.decisions import Notification, notifications_of
from incidents.notifications.later import fire_notification
from incidents.requests import SaveProfile
from incidents.store import Caller, Store, new_id
from incidents.timers.firing import FireHere
from incidents.timers.schedule import TimerKind, timer_from_item
from incidents.timers.sweep import sweep
from incidents.users import save_profile

T0 = datetime(2027, 4, 5, 10, 0, 5, tzinfo=UTC)
LOOPBACK = EndpointPolicy(allow_loopback=True)
HANDLERS = {TimerKind.ESCALATION: fire_escalation, TimerKind.NOTIFICATION: fire_notification}


class World:
    """An account whose user Bob has his profile's email (a rule at 0 minutes, as every new
    user gets), a verified Slack webhook at 0 minutes, and rules that do not apply now."""

    def __init__(self, store: Store, slack_url: str) -> None:
        self.store, self.now = store, T0
        store.clock = lambda: self.now
        account = new_id("acct")
        self.bob = Caller(account, new_id("user"))
        save_profile(store, self.bob, SaveProfile(name="Bob", email="bob@example.com"))
        self.slack = self.method({"type": "slack_contact_method", "label": "on-call",
                                  "address": slack_url})  # fmt: skip
        self.high_slack = self.rule(self.slack, 0)
        self.later = self.rule(self.slack, 5)  # a timer's, not the page's
        self.low_slack = self.rule(self.slack, 0, Urgency.LOW)  # integrations' default: high
        unverified = create_contact_method(
            store, self.bob, self.bob.user_id,
            ContactMethodBody.model_validate({"contact_method": {
                "type": "email_contact_method", "label": "Home", "address": "bob@home.example"}}),
            check_url=lambda _: None,
        ).id  # fmt: skip
        self.rule(unverified, 0, kind="email")

    def method(self, fields: dict[str, str]) -> str:
        body = ContactMethodBody.model_validate({"contact_method": fields})
        who = self.bob.user_id
        method_id = create_contact_method(
            self.store, self.bob, who, body, check_url=LOOPBACK.check_url
        ).id
        message = pending_verification_message(self.store, self.bob.account_id, who, method_id)
        assert message is not None
        (code,) = re.findall(r"\b[0-9]{6}\b", message.body)
        verify_contact_method(self.store, self.bob, who, method_id, VerificationCode(code=code))
        return method_id

    def rule(
        self, method_id: str, delay: int, urgency: Urgency = Urgency.HIGH, kind: str = "slack"
    ) -> str:
        body = NotificationRuleBody.model_validate({"notification_rule": {
            "start_delay_in_minutes": delay, "urgency": urgency.value,
            "contact_method": {"id": method_id, "type": f"{kind}_contact_method_reference"},
        }})  # fmt: skip
        return create_notification_rule(self.store, self.bob, self.bob.user_id, body).id

    def at(self, after: timedelta) -> None:
        """The clock at `after` T0, and a sweep then."""
        self.now = T0 + after
        sweep(self.store, self.now, FireHere(HANDLERS))

    def notified(self, incident: str) -> list[tuple[Channel, str]]:
        """The incident's notifications: channel and rule."""
        return [(n.channel, n.rule_id)
                for n in notifications_of(self.store, self.bob.account_id, incident)]  # fmt: skip

    def paged(
        self, dedup_key: str = "db-1", summary: str = "disk full", **urgency: Any
    ) -> tuple[str, dict[str, Any]]:
        """An incident paging Bob at level 1 (its escalation's timer fired, not swept: the
        publisher's test shares a table whose sweep marker is at the real clock), opened by
        an integration of the `urgency` rule and support hours given, and the page's insert
        as the stream has it."""
        target = {"type": "user", "id": self.bob.user_id}
        request = EscalationPolicyRequest.model_validate({"name": "Payments", "escalation_rules": [
            {"escalation_delay_in_minutes": 5, "targets": [target]}]})  # fmt: skip
        policy = create_policy(self.store, self.bob, request).id
        wanted = NewIntegration.model_validate(
            {"name": "prometheus", "escalation_policy_id": policy, **urgency}
        )
        created = create_integration(self.store, self.bob, wanted)
        caller, integration = authenticate(self.store, created.key)
        payload = {"summary": summary, "source": "db-1", "severity": "critical"}
        alert = ALERT_EVENTS.validate_python(
            {"event_action": "trigger", "dedup_key": dedup_key, "payload": payload}
        )
        incident = ingest_alert(self.store, caller, integration, alert).incident_id
        assert incident is not None
        due = self.store.get(*timer_key(self.bob.account_id, TimerKind.ESCALATION, incident))
        assert due is not None
        assert fire_escalation(self.store, timer_from_item(due)), "level 1 paged"
        pk = f"{self.bob.account_id}#{incident}"
        (page,) = self.store.query_partition(pk, prefix=PAGE_PREFIX)
        stream = {"NewImage": page, "SequenceNumber": "1", "StreamViewType": "NEW_IMAGE"}
        return incident, {"eventID": "1", "eventName": "INSERT", "dynamodb": stream}


def jobs(notifications: list[Notification]) -> list[NotificationJob]:
    return [
        NotificationJob(account_id=n.account_id, incident_id=n.incident_id,
                        notification=n.sort_key, contact_method_id=n.contact_method_id)
        for n in notifications
    ]  # fmt: skip
