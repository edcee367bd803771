"""The providers that carry a message, each behind one call that says what became of it:
sent (with the provider's message id), worth another try (throttled, a 5xx, a timeout,
Slack's 429 with its ``Retry-After``), or refused for good (any other 4xx: trying again
would be refused again). Decision 019 says why these services and what each costs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from incidents.contacts.messages import OutgoingMessage
from incidents.contacts.models import Channel
from incidents.events_out.endpoints import REFUSED, EndpointPolicy, post

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client

TRANSIENT_SES_CODES = frozenset(
    {"TooManyRequestsException", "LimitExceededException", "InternalFailure", "ServiceUnavailable"}
)
"""SES v2's answers that a later try may pass: throttling and its own failures."""


@dataclass(frozen=True)
class Handed:
    """What a provider did with one message."""

    sent: bool = False
    message_id: str | None = None
    """Its id at the provider (Slack gives none)."""
    retry_after: int | None = None
    """Seconds to wait before another try (None: not worth one)."""
    reason: str | None = None
    """Why it was not taken."""


class Carrier(Protocol):
    """One channel's provider."""

    def hand(self, message: OutgoingMessage) -> Handed:
        """Give `message` to the provider once."""


@dataclass(frozen=True)
class SesEmail:
    """Email through SES v2 ``SendEmail``, from the stage's verified sender, through its
    configuration set (whose events are the message's receipts)."""

    ses: SESV2Client
    sender: str
    configuration_set: str | None = None

    def hand(self, message: OutgoingMessage) -> Handed:
        """One ``SendEmail``: plain text, the notification's subject and body."""
        request = {
            "FromEmailAddress": self.sender,
            "Destination": {"ToAddresses": [message.to]},
            "Content": {"Simple": {
                "Subject": {"Data": message.subject or "", "Charset": "UTF-8"},
                "Body": {"Text": {"Data": message.body, "Charset": "UTF-8"}},
            }},
        }  # fmt: skip
        if self.configuration_set is not None:
            request["ConfigurationSetName"] = self.configuration_set
        try:
            answer = self.ses.send_email(**request)  # type: ignore[arg-type]
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400)
            reason = f"{code}: {error.response.get('Error', {}).get('Message', '')}"
            if code in TRANSIENT_SES_CODES or status >= 500:
                return Handed(retry_after=0, reason=reason)
            return Handed(reason=reason)
        except BotoCoreError as error:  # no answer: a timeout, a reset
            return Handed(retry_after=0, reason=str(error))
        return Handed(sent=True, message_id=answer["MessageId"])


@dataclass(frozen=True)
class SlackWebhook:
    """A Slack incoming webhook: one POST of ``{"text": ...}``, checked against the same
    address policy as webhooks (the method's URL was checked when it was added, and is
    again at each send)."""

    policy: EndpointPolicy

    def hand(self, message: OutgoingMessage) -> Handed:
        """One POST; Slack answers 200 ``ok``, with no id."""
        body = json.dumps({"text": message.body}).encode()
        outcome = post(message.to, body, {"Content-Type": "application/json"}, self.policy)
        if outcome.succeeded:
            return Handed(sent=True)
        reason = outcome.error or f"HTTP {outcome.status}"
        if reason.startswith(REFUSED):  # the address policy's: refused again on any try
            return Handed(reason=reason)
        if outcome.status is None or outcome.status >= 500 or outcome.status == 429:
            return Handed(retry_after=outcome.retry_after or 0, reason=reason)
        return Handed(reason=reason)


Carriers = Mapping[Channel, Carrier]
"""The stage's providers by channel; a channel without one (SMS and voice until their
provider is configured) fails its messages, saying so."""
