"""Alertmanager's webhook and Grafana Alerting's webhook contact point, taken where
PagerDuty's body is: the body most teams point at a webhook URL first, and a refusal is a
lost page (neither tool retries a 4xx).

A grouped body carries its group's alerts. Each is read as the PagerDuty alert it stands
for (its ``fingerprint`` the dedup key, ``firing`` a trigger, ``resolved`` a resolve) and
ingested by `incidents.alerts.ingest`, in the body's order: each opens, joins or moves its
own key's incident (or its integration's group's), exactly once under retries, as any
alert does. The answer names what each did.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    model_validator,
)

from incidents.alerts.ingest import ingest_alert
from incidents.alerts.models import (
    HTTP_URL,
    HTTPS_URL,
    SUMMARY_MAX,
    URL_MAX,
    AlertAccepted,
    AlertEvent,
    AlertSeverity,
    DedupKey,
    EventAction,
    Integration,
    MoveAlert,
    SentTime,
    TriggerAlert,
    cut_to,
)
from incidents.models import RESPONSE
from incidents.store import Caller, Store
from incidents.text import one_line

MAX_GROUPED_ALERTS = 100
"""Alerts one body may carry: each is its own ingest (a few writes), and all of them must fit
the function's 10 s. Alertmanager's ``max_alerts`` and Grafana's ``maxAlerts`` cut a larger
group to it at the sender (counted in ``truncatedAlerts``)."""
SEVERITY_LABEL = "severity"
SEVERITY_WORDS = {
    **{severity.value: severity for severity in AlertSeverity},
    "warn": AlertSeverity.WARNING,
    "information": AlertSeverity.INFO,
}
"""A ``severity`` label's value (any case) as PagerDuty's four; others read as `UNNAMED`."""
UNNAMED = AlertSeverity.ERROR
"""The severity of an alert without a ``severity`` label PagerDuty's four name: what
Alertmanager's PagerDuty receiver sends when it is not told (``severity: error``)."""
LINKS = (
    ("generator_url", "source"),
    ("silence_url", "silence"),
    ("dashboard_url", "dashboard"),
    ("panel_url", "panel"),
)
"""Each alert's URLs shown as links (http or https only), with their text."""
LINK = re.compile(HTTP_URL)
IMAGE = re.compile(HTTPS_URL)

Labels = dict[str, str]


def _zero_is_unset(value: datetime | None) -> datetime | None:
    """Go's zero time (``0001-01-01T00:00:00Z``: a firing alert's ``endsAt``) is no time."""
    return None if value is not None and value.year == 1 else value


GoTime = Annotated[SentTime | None, AfterValidator(_zero_is_unset)]


class WebhookAlert(BaseModel):
    """One alert of a grouped body: Alertmanager's fields, and Grafana's besides."""

    model_config = ConfigDict(extra="ignore")

    status: Literal["firing", "resolved"]
    fingerprint: DedupKey
    """A digest of its labels: the same alert's in every notification, so its dedup key."""
    labels: Labels = Field(default_factory=dict)
    annotations: Labels = Field(default_factory=dict)
    starts_at: GoTime = Field(default=None, alias="startsAt")
    ends_at: GoTime = Field(default=None, alias="endsAt")
    generator_url: str | None = Field(default=None, alias="generatorURL")
    silence_url: str | None = Field(default=None, alias="silenceURL")
    dashboard_url: str | None = Field(default=None, alias="dashboardURL")
    panel_url: str | None = Field(default=None, alias="panelURL")
    image_url: str | None = Field(default=None, alias="imageURL")
    values: dict[str, Any] | None = None
    """Grafana's: the values of the rule's queries that fired it."""
    value_string: str | None = Field(default=None, alias="valueString")


class GroupedAlerts(BaseModel):
    """Alertmanager's webhook body (``version`` 4) or Grafana's (``version`` 1, with
    ``orgId``, ``title``, ``state`` and ``message``): a group's alerts, each firing or
    resolved, with the labels and annotations they share."""

    model_config = ConfigDict(extra="ignore")

    version: str | None = None
    alerts: list[WebhookAlert] = Field(max_length=MAX_GROUPED_ALERTS)
    receiver: str | None = None
    status: str | None = None
    group_key: str | None = Field(default=None, alias="groupKey")
    group_labels: Labels = Field(default_factory=dict, alias="groupLabels")
    common_labels: Labels = Field(default_factory=dict, alias="commonLabels")
    common_annotations: Labels = Field(default_factory=dict, alias="commonAnnotations")
    external_url: str | None = Field(default=None, alias="externalURL")
    truncated_alerts: int = Field(default=0, alias="truncatedAlerts")
    org_id: int | None = Field(default=None, alias="orgId")
    title: str | None = None
    state: str | None = None
    _events: list[AlertEvent] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _as_events(self) -> GroupedAlerts:
        """Each alert as PagerDuty's, checked here: an alert whose text breaks the rules
        every alert's text follows is a 400 naming it, as PagerDuty's body would be."""
        for index, alert in enumerate(self.alerts):
            try:
                self._events.append(_event(self, alert))
            except ValidationError as error:
                problem = error.errors()[0]
                where = ".".join(str(part) for part in problem["loc"])
                why = problem["msg"].removeprefix("Value error, ")
                raise ValueError(f"alerts.{index}, read as PagerDuty's {where}: {why}") from None
        return self

    @property
    def client(self) -> str:
        """The tool that sent it (Grafana names its organization; Alertmanager does not)."""
        return "Grafana" if self.org_id is not None else "Alertmanager"

    @property
    def events(self) -> list[AlertEvent]:
        """Its alerts as PagerDuty's, in its order."""
        return self._events


class GroupAccepted(BaseModel):
    """The answer to a grouped body (202): what each of its alerts did, in its order."""

    model_config = RESPONSE

    alerts: list[AlertAccepted]


def _kind(body: Any) -> str | None:
    """Which body: PagerDuty's by its ``event_action``, a grouped one by its ``alerts``."""
    if isinstance(body, dict):
        action = body.get("event_action")
        if action is None and "alerts" in body:
            return "webhook"
        return action if isinstance(action, str) else None
    return getattr(body, "event_action", "webhook")


BODY_RULE = (
    "PagerDuty's Events API v2 body (event_action: trigger, acknowledge or resolve), or "
    "Alertmanager's or Grafana's webhook body (alerts)"
)
AlertBody = Annotated[
    Annotated[TriggerAlert, Tag(EventAction.TRIGGER.value)]
    | Annotated[MoveAlert, Tag(EventAction.ACKNOWLEDGE.value)]
    | Annotated[MoveAlert, Tag(EventAction.RESOLVE.value)]
    | Annotated[GroupedAlerts, Tag("webhook")],
    Discriminator(_kind, custom_error_type="alert_body", custom_error_message=BODY_RULE),
]
"""What the alert routes take: one PagerDuty alert, or a group of Alertmanager's or
Grafana's."""


def ingest_grouped(
    store: Store, caller: Caller, integration: Integration, body: GroupedAlerts
) -> GroupAccepted:
    """Each of the body's alerts ingested as the PagerDuty alert it stands for, in order. A
    failure part way (a 429 on a busy key) fails the body, and the tool's retry of it counts
    again only what was not counted (each alert's own retry answer)."""
    return GroupAccepted(
        alerts=[ingest_alert(store, caller, integration, event) for event in body.events]
    )


def _event(body: GroupedAlerts, alert: WebhookAlert) -> AlertEvent:
    """`alert` as PagerDuty's: a resolve when resolved (at its end), else a trigger."""
    if alert.status == "resolved":
        moved = {"timestamp": alert.ends_at.isoformat()} if alert.ends_at else None
        return MoveAlert.model_validate(
            {"event_action": EventAction.RESOLVE, "dedup_key": alert.fingerprint,
             "payload": moved}
        )  # fmt: skip
    return TriggerAlert.model_validate(
        {
            "event_action": EventAction.TRIGGER,
            "dedup_key": alert.fingerprint,
            "payload": {
                "summary": _summary(body, alert),
                "source": _source(body, alert),
                "severity": _severity(alert),
                "timestamp": alert.starts_at.isoformat() if alert.starts_at else None,
                "custom_details": _details(body, alert),
            },
            "links": [
                {"href": url, "text": text}
                for url, text in ((getattr(alert, name), text) for name, text in LINKS)
                if _shown(url, LINK)
            ],
            "images": [{"src": alert.image_url}] if _shown(alert.image_url, IMAGE) else [],
            "client": body.client,
            "client_url": body.external_url if _shown(body.external_url, LINK) else None,
        }
    )


def _summary(body: GroupedAlerts, alert: WebhookAlert) -> str:
    """Its annotation ``summary``, else ``description``, else its ``alertname`` (else the
    group's title, else its fingerprint): one line, cut to PagerDuty's 1,024 characters."""
    annotations, labels = alert.annotations, alert.labels
    found = _first(annotations.get("summary"), annotations.get("description"),
                   labels.get("alertname"), body.title)  # fmt: skip
    return cut_to(found or alert.fingerprint, SUMMARY_MAX)


def _source(body: GroupedAlerts, alert: WebhookAlert) -> str:
    """Where it fired: its ``instance`` label, else its ``job``, else the tool's name."""
    return _first(alert.labels.get("instance"), alert.labels.get("job")) or body.client


def _first(*texts: str | None) -> str | None:
    """The first of `texts` with something on it once made one line (a label may be set
    to spaces)."""
    return next((one_line(t).strip() for t in texts if t and one_line(t).strip()), None)


def _severity(alert: WebhookAlert) -> AlertSeverity:
    """Its ``severity`` label as one of PagerDuty's four (`UNNAMED` if it names none)."""
    named = alert.labels.get(SEVERITY_LABEL, "").strip().lower()
    return SEVERITY_WORDS.get(named, UNNAMED)


def _details(body: GroupedAlerts, alert: WebhookAlert) -> dict[str, Any]:
    """The alert's own labels, annotations and times, Grafana's values, and its group's
    labels and annotations (what the tool would have shown in its message)."""
    own = alert.model_dump(
        mode="json",
        include={"labels", "annotations", "starts_at", "ends_at", "generator_url", "values",
                 "value_string", "silence_url", "dashboard_url", "panel_url", "image_url"},
        exclude_none=True,
    )  # fmt: skip
    group = body.model_dump(
        mode="json",
        include={"receiver", "status", "group_key", "group_labels", "common_labels",
                 "common_annotations", "external_url", "truncated_alerts", "org_id", "title",
                 "state"},
        exclude_none=True,
    )  # fmt: skip
    return {**own, "group": group}


def _shown(url: str | None, pattern: re.Pattern[str]) -> bool:
    """Whether `url` may be a link or an image (what may not stays in the details)."""
    return url is not None and len(url) <= URL_MAX and pattern.match(url) is not None
