"""A stand-in for AWS End User Messaging SMS and voice v2 (moto has none), served in front of
moto's server: ``SendTextMessage`` and ``SendVoiceMessage`` on its JSON protocol, each
request checked against botocore's model of the service (required members, types, lengths,
patterns, enums: AWS's ``ValidationException``), and the limits the paging code depends on
held as AWS holds them: an origination identity it does not know is
``ResourceNotFoundException``; message parts a second per identity past its rate are
``ThrottlingException``; a month's spend past its limit is ``ServiceQuotaExceededException``
(``MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT`` or ``…_FOR_VOICE``); a price over the request's
``MaxPrice`` is ``ValidationException`` (``PRICE_OVER_THRESHOLD``). It delivers nothing: it keeps
each message, listed as JSON at `MESSAGES_PATH` (``make dev``'s outbox reads it)."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import botocore.session
from botocore.model import StringShape
from botocore.validate import ParamValidator

from incidents.notifications.spend import minutes, parts

TARGET_PREFIX = "PinpointSMSVoiceV2."
MESSAGES_PATH = "/_stand-in/sms-voice/messages.json"
LOCAL_NUMBER = "+18005550100"
LOCAL_IDENTITY = "arn:aws:sms-voice:us-east-1:123456789012:phone-number/phone-local"
"""The origination identity ``make dev`` and the tests send from (a toll-free number)."""
Handler = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class Refused(Exception):  # noqa: N818 - named as AWS's answers are
    """An answer AWS gives instead of a message id: its error type, message and reason."""

    def __init__(self, kind: str, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.reason = kind, reason


@dataclass
class Pricing:
    """One channel's price and monthly spend limit, in dollars, and its month's spend."""

    price: Decimal
    """A text's part, or a call's minute."""
    limit: Decimal
    reason: str
    spent: Decimal = Decimal(0)


@dataclass
class SmsVoice:
    """The service's state: its identities, limits and every message it took."""

    identities: dict[str, str] = field(default_factory=lambda: {LOCAL_IDENTITY: LOCAL_NUMBER})
    parts_per_second: float = 3.0
    """A US toll-free number's rate."""
    text: Pricing = field(default_factory=lambda: Pricing(
        Decimal("0.0083"), Decimal("100"), "MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT"))  # fmt: skip
    voice: Pricing = field(default_factory=lambda: Pricing(
        Decimal("0.013"), Decimal("100"), "MONTHLY_SPEND_LIMIT_REACHED_FOR_VOICE"))  # fmt: skip
    messages: list[dict[str, Any]] = field(default_factory=list)
    _tokens: dict[str, tuple[float, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    clock: Callable[[], float] = time.monotonic

    def send(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        """One ``Send…Message`` request: its answer, or `Refused`."""
        _validated(operation, request)
        identity = request["OriginationIdentity"]
        if identity not in self.identities:
            raise Refused("ResourceNotFoundException", f"no origination identity {identity}")
        voice = operation == "SendVoiceMessage"
        channel = self.voice if voice else self.text
        units = minutes(request["MessageBody"]) if voice else parts(request["MessageBody"])
        ceiling = request.get("MaxPricePerMinute" if voice else "MaxPrice")
        price = channel.price if voice else channel.price * units  # a minute's; a text's
        if ceiling is not None and price > Decimal(ceiling):
            raise Refused("ValidationException", "price over MaxPrice", "PRICE_OVER_THRESHOLD")
        with self._lock:
            self._take(identity, units)
            cost = channel.price * units
            if channel.spent + cost > channel.limit:
                raise Refused(
                    "ServiceQuotaExceededException", "monthly spend limit reached", channel.reason
                )
            channel.spent += cost
            message_id = str(uuid.uuid4())
            self.messages.append({
                "message_id": message_id, "channel": "voice" if voice else "sms",
                "to": request["DestinationPhoneNumber"], "from": self.identities[identity],
                "body": request["MessageBody"], "parts": units, "sent_at": time.time(),
            })  # fmt: skip
        return {"MessageId": message_id}

    def _take(self, identity: str, units: int) -> None:
        """`units` of the identity's rate (a bucket of one second's parts), or throttled."""
        now = self.clock()
        tokens, since = self._tokens.get(identity, (self.parts_per_second, now))
        tokens = min(self.parts_per_second, tokens + (now - since) * self.parts_per_second)
        if tokens < units:
            self._tokens[identity] = (tokens, now)
            raise Refused("ThrottlingException", "message parts per second exceeded")
        self._tokens[identity] = (tokens - units, now)


SERVICE = SmsVoice()
"""This process's stand-in (as moto's backends are: the tests read and set it)."""
_MODEL = botocore.session.get_session().get_service_model("pinpoint-sms-voice-v2")
SERVED = ("SendTextMessage", "SendVoiceMessage")


def _validated(operation: str, request: dict[str, Any]) -> None:
    """`request` as botocore's model of `operation` allows it, or ``ValidationException``."""
    shape = _MODEL.operation_model(operation).input_shape
    assert shape is not None, "both operations take a request"
    report = ParamValidator().validate(request, shape)
    problems = [report.generate_report()] if report.has_errors() else []
    for name, value in request.items():
        member = shape.members.get(name)
        if isinstance(member, StringShape) and isinstance(value, str):
            problems += _string_problems(name, value, member)
    if problems:
        raise Refused("ValidationException", "; ".join(problems), "FIELD_VALIDATION_FAILED")


def _string_problems(name: str, value: str, shape: StringShape) -> list[str]:
    rules = shape.metadata
    found = []
    if "max" in rules and len(value) > rules["max"]:
        found.append(f"{name}: longer than {rules['max']}")
    if "pattern" in rules and not re.fullmatch(rules["pattern"], value):
        found.append(f"{name}: does not match {rules['pattern']}")
    if shape.enum and value not in shape.enum:
        found.append(f"{name}: not one of {shape.enum}")
    return found


class SmsVoiceFront:
    """WSGI middleware: End User Messaging's requests to `SERVICE`, the rest to `app`."""

    def __init__(self, app: Handler) -> None:
        self._app = app

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
        if environ.get("PATH_INFO") == MESSAGES_PATH:
            return _answer(start_response, "200 OK", {"messages": SERVICE.messages})
        if not target.startswith(TARGET_PREFIX):
            return self._app(environ, start_response)
        operation = target.removeprefix(TARGET_PREFIX)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        request = json.loads(environ["wsgi.input"].read(length) or b"{}")
        if operation not in SERVED:
            refused = Refused("UnknownOperationException", f"{operation}: not in the stand-in")
            return _refused(start_response, refused)
        try:
            return _answer(start_response, "200 OK", SERVICE.send(operation, request))
        except Refused as refused:
            return _refused(start_response, refused)


def _refused(start_response: Callable[..., Any], refused: Refused) -> list[bytes]:
    body: dict[str, Any] = {"__type": refused.kind, "Message": str(refused)}
    if refused.reason is not None:
        body["Reason"] = refused.reason
    return _answer(start_response, "400 Bad Request", body)


def _answer(start_response: Callable[..., Any], status: str, body: dict[str, Any]) -> list[bytes]:
    start_response(status, [("Content-Type", "application/x-amz-json-1.0")])
    return [json.dumps(body, default=str).encode()]
