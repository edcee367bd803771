"""Contact methods and notification rules as the API takes and shows them: PagerDuty's
names and shapes (bodies wrapped in ``contact_method`` / ``notification_rule``, types
``*_contact_method``), plus ``slack_contact_method`` (an incoming webhook) and a
``verified`` flag of our own."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    model_validator,
)

from incidents.contacts.phones import MAX_TYPED, e164
from incidents.models import KSUID, RESPONSE, Timestamp
from incidents.requests import AS_JSON_INTEGER, CleanName, Email

CONTACT_METHOD_ID = rf"^cm_{KSUID}$"
NOTIFICATION_RULE_ID = rf"^nr_{KSUID}$"
ContactMethodId = Annotated[str, StringConstraints(pattern=CONTACT_METHOD_ID)]
MAX_CONTACT_METHODS = 20
MAX_NOTIFICATION_RULES = 20
"""What one user holds at most of each (a 409 ``limit_reached`` beyond): every page reads
them all, and nobody is reached better by a 21st way."""
MAX_START_DELAY = 1440
"""Minutes a rule may wait at most: a day (PagerDuty sets no maximum; GoAlert 9,000)."""
SLACK_URL_MAX = 2048

UrlCheck = Callable[[str], object]
"""The SSRF check a Slack webhook's URL passes, as a webhook's does
(`incidents.events_out.endpoints.EndpointPolicy.check_url`, handed in by the handler:
this package sits below ``events_out``)."""


class ContactMethodType(StrEnum):
    """How a method reaches its user (PagerDuty's names; push comes later)."""

    EMAIL = "email_contact_method"
    SMS = "sms_contact_method"
    PHONE = "phone_contact_method"
    """A voice call."""
    SLACK = "slack_contact_method"
    """A message to a Slack incoming webhook (not one of PagerDuty's)."""

    @property
    def channel(self) -> Channel:
        """The delivery channel that carries its messages."""
        return CHANNELS[self]

    @property
    def reference(self) -> str:
        """Its type as a reference names it (``sms_contact_method_reference``)."""
        return f"{self.value}_reference"


class Channel(StrEnum):
    """What delivers a message (issue 65, point 3)."""

    EMAIL = "email"
    SMS = "sms"
    VOICE = "voice"
    SLACK = "slack"


CHANNELS = {
    ContactMethodType.EMAIL: Channel.EMAIL,
    ContactMethodType.SMS: Channel.SMS,
    ContactMethodType.PHONE: Channel.VOICE,
    ContactMethodType.SLACK: Channel.SLACK,
}


class Urgency(StrEnum):
    """Which incidents a notification rule is for (PagerDuty's urgencies)."""

    HIGH = "high"
    LOW = "low"


class EmailMethodRequest(BaseModel):
    """An email address (checked and normalized as a profile's email is)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["email_contact_method"]
    label: CleanName
    address: Email
    enabled: StrictBool = True


class PhoneMethodRequest(BaseModel):
    """A number for SMS or voice: E.164 (``+14155552671``), or PagerDuty's national number
    with its ``country_code``; stored and shown as E.164."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["sms_contact_method", "phone_contact_method"]
    label: CleanName
    address: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TYPED)]
    country_code: Annotated[StrictInt, Field(ge=1, le=1999), AS_JSON_INTEGER] | None = None
    enabled: StrictBool = True

    @model_validator(mode="after")
    def _normalized(self) -> Self:
        self.address, self.country_code = e164(self.address, self.country_code)
        return self


class SlackMethodRequest(BaseModel):
    """A Slack incoming webhook's URL (checked as a webhook's URL is)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["slack_contact_method"]
    label: CleanName
    address: Annotated[
        str,
        StringConstraints(
            strip_whitespace=True, max_length=SLACK_URL_MAX, pattern=r"^[Hh][Tt][Tt][Pp][Ss]?://"
        ),
        Field(examples=["https://hooks.slack.com/services/T000/B000/XXXX"]),
    ]
    enabled: StrictBool = True


MethodRequest = Annotated[
    EmailMethodRequest | PhoneMethodRequest | SlackMethodRequest, Field(discriminator="type")
]


class ContactMethodBody(BaseModel):
    """A contact method to create, or to replace one with (its type stays)."""

    model_config = ConfigDict(extra="forbid")

    contact_method: MethodRequest


class ContactMethod(BaseModel):
    """A way to reach a user. It receives nothing but its verification code until
    ``verified``; ``enabled`` false pauses it."""

    model_config = RESPONSE

    id: str
    type: ContactMethodType
    summary: str
    """Its label (PagerDuty's short form)."""
    label: str
    address: str
    """An email address, an E.164 number, or a Slack webhook's URL."""
    country_code: int | None
    """The number's country calling code (SMS and voice only)."""
    verified: bool
    enabled: bool


class ContactMethodAnswer(BaseModel):
    """One contact method, wrapped as PagerDuty answers."""

    model_config = RESPONSE

    contact_method: ContactMethod


class ContactMethodList(BaseModel):
    """A user's contact methods, oldest first (at most 20: no pages)."""

    model_config = RESPONSE

    contact_methods: list[ContactMethod]


class VerificationCode(BaseModel):
    """The code a person read from their method's message."""

    model_config = ConfigDict(extra="forbid")

    code: Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[0-9]{6}$")]


class Verification(BaseModel):
    """A new code made: where it goes, until when it holds, and that its message waits
    for delivery (the delivery channels send it: issue 65, point 3)."""

    model_config = RESPONSE

    contact_method_id: str
    channel: Channel
    expires_at: Timestamp
    attempts_allowed: int
    """Wrong codes the method takes before this one is void."""
    delivery: Literal["pending"]


class VerificationAnswer(BaseModel):
    """A new verification code, wrapped."""

    model_config = RESPONSE

    verification: Verification


class MethodReferenceRequest(BaseModel):
    """Which of the user's methods a rule uses: its id and type (either name of the type,
    ``sms_contact_method`` or PagerDuty's ``sms_contact_method_reference``)."""

    model_config = ConfigDict(extra="forbid")

    id: ContactMethodId
    type: (
        ContactMethodType
        | Literal[
            "email_contact_method_reference",
            "sms_contact_method_reference",
            "phone_contact_method_reference",
            "slack_contact_method_reference",
        ]
    )

    @property
    def method_type(self) -> ContactMethodType:
        """The method's type, whichever name was sent."""
        return ContactMethodType(self.type.removesuffix("_reference"))


class NotificationRuleRequest(BaseModel):
    """After how long an incident of one urgency reaches the user through one method."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["assignment_notification_rule"] = "assignment_notification_rule"
    start_delay_in_minutes: Annotated[StrictInt, Field(ge=0, le=MAX_START_DELAY), AS_JSON_INTEGER]
    contact_method: MethodReferenceRequest
    urgency: Urgency


class NotificationRuleBody(BaseModel):
    """A notification rule to create, or to replace one with."""

    model_config = ConfigDict(extra="forbid")

    notification_rule: NotificationRuleRequest


class ContactMethodReference(BaseModel):
    """A contact method a rule names."""

    model_config = RESPONSE

    id: str
    type: str
    """``<type>_reference``, as PagerDuty names it."""


class NotificationRule(BaseModel):
    """A rule as stored and shown."""

    model_config = RESPONSE

    id: str
    type: Literal["assignment_notification_rule"] = "assignment_notification_rule"
    start_delay_in_minutes: int
    contact_method: ContactMethodReference
    urgency: Urgency


class NotificationRuleAnswer(BaseModel):
    """One notification rule, wrapped as PagerDuty answers."""

    model_config = RESPONSE

    notification_rule: NotificationRule


class NotificationRuleList(BaseModel):
    """A user's notification rules, oldest first (at most 20: no pages)."""

    model_config = RESPONSE

    notification_rules: list[NotificationRule]
