"""The providers that carry a message, each behind one call that says what became of it:
sent (with the provider's message id), worth another try (throttled, a 5xx, a timeout,
Slack's 429 with its ``Retry-After``), or refused for good (any other 4xx: trying again
would be refused again). Email goes through SES v2, SMS and calls through AWS End User
Messaging, Slack to its incoming webhook. Decision 019 says why these services and what
each costs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from botocore.exceptions import BotoCoreError, ClientError

from incidents.contacts.messages import OutgoingMessage
from incidents.contacts.models import Channel
from incidents.events_out.endpoints import REFUSED, EndpointPolicy, post
from incidents.notifications.spend import MAX_PRICE, SpendCap, most_it_costs

if TYPE_CHECKING:
    from mypy_boto3_pinpoint_sms_voice_v2 import PinpointSMSVoiceV2Client
    from mypy_boto3_sesv2 import SESV2Client

TRANSIENT_AWS_CODES = frozenset({
    "TooManyRequestsException", "LimitExceededException", "InternalFailure",
    "ServiceUnavailable", "ThrottlingException", "InternalServerException",
})  # fmt: skip
"""SES v2's and End User Messaging's answers that a later try may pass: throttling and the
service's own failures. Any other refusal (a spend limit reached, an opted-out number, a
rejected message) would be refused again."""
TIME_TO_LIVE_SECONDS = 15 * 60
"""How long End User Messaging may keep trying to deliver an SMS or call: a page's level
has passed by then (`messages.STALE_AFTER`), and a code has expired."""


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
    unsure: bool = False
    """Whether the provider may have taken it after all (no answer, or its own failure)."""


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
        request: dict[str, Any] = {
            "FromEmailAddress": self.sender,
            "Destination": {"ToAddresses": [message.to]},
            "Content": {"Simple": {
                "Subject": {"Data": message.subject or "", "Charset": "UTF-8"},
                "Body": {"Text": {"Data": message.body, "Charset": "UTF-8"}},
            }},
            **_configuration_set(self.configuration_set),
        }  # fmt: skip
        return _sent_by_aws(lambda: self.ses.send_email(**request))


PHONE_FIELDS: dict[Channel, dict[str, Any]] = {
    Channel.SMS: {"MessageType": "TRANSACTIONAL"},
    Channel.VOICE: {
        "MessageBodyTextType": "TEXT",
        "VoiceId": "JOANNA",
        "MaxPricePerMinute": str(MAX_PRICE[Channel.VOICE]),
    },
}
"""What a text's request says beside the message (transactional; its ``MaxPrice``, the
price of its parts, is its reservation), and a call's (the text read aloud, at most
`MAX_PRICE` a minute)."""


@dataclass(frozen=True)
class EndUserMessaging:
    """A text (``SendTextMessage``) or a call (``SendVoiceMessage``) through AWS End User
    Messaging from the stage's origination identity, within the account's monthly budget
    for its channel (`spend`); AWS gives up on it after `TIME_TO_LIVE_SECONDS` (a page that
    late is stale)."""

    client: PinpointSMSVoiceV2Client
    channel: Channel
    origination_identity: str
    spend: SpendCap
    configuration_set: str | None = None

    def hand(self, message: OutgoingMessage) -> Handed:
        """One request of the channel's, if the most it costs fits the budget; the
        reservation given back when AWS surely did not take it."""
        cost = most_it_costs(self.channel, message.body)
        reservation = self.spend.reserve(message.account_id, cost)
        if reservation is None:
            return Handed(
                reason=f"spend_cap: the account's {self.channel.value} budget for this month "
                f"(${self.spend.cap}) has no room for ${cost}"
            )
        request: dict[str, Any] = {
            "DestinationPhoneNumber": message.to,
            "OriginationIdentity": self.origination_identity,
            "MessageBody": message.body,
            "TimeToLive": TIME_TO_LIVE_SECONDS,
            **PHONE_FIELDS[self.channel],
            **_configuration_set(self.configuration_set),
        }
        if self.channel is Channel.VOICE:
            handed = _sent_by_aws(lambda: self.client.send_voice_message(**request))
        else:
            request["MaxPrice"] = f"{cost:.5f}"
            handed = _sent_by_aws(lambda: self.client.send_text_message(**request))
        if not handed.sent and not handed.unsure:
            self.spend.give_back(reservation)
        return handed


def _configuration_set(name: str | None) -> dict[str, str]:
    return {} if name is None else {"ConfigurationSetName": name}


def _sent_by_aws(send: Callable[[], Mapping[str, Any]]) -> Handed:
    """One call of an AWS service that answers with a ``MessageId``, read as `Handed`."""
    try:
        answer = send()
    except ClientError as error:
        details = error.response.get("Error", {})
        code = details.get("Code", "")
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400)
        why = cast("Mapping[str, Any]", error.response).get("Reason")  # End User Messaging's
        reason = f"{code}: {details.get('Message', '')}" + (f" ({why})" if why else "")
        if status >= 500:
            return Handed(retry_after=0, reason=reason, unsure=True)
        if code in TRANSIENT_AWS_CODES:
            return Handed(retry_after=0, reason=reason)
        return Handed(reason=reason)
    except BotoCoreError as error:  # no answer: a timeout, a reset
        return Handed(retry_after=0, reason=str(error), unsure=True)
    return Handed(sent=True, message_id=str(answer["MessageId"]))


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
"""The stage's providers by channel; a channel without one (SMS and voice without an
origination identity, email without a sender) fails its messages, saying so."""
