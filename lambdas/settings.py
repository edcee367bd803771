"""The stage's shard settings, from the functions' environment to the store, checked at cold start.

The CDK stack writes them (`to_environment`, from ``cdk.json``'s stage) and the functions read
them back (`from_environment`), so both directions live here. Shard counts are part of the
data's address: a value that is not a power of two, or a state without a count, would send
writes where no reader looks, so a bad value stops the container at import with a message
that names the variable, instead of serving from a wrong key space.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dynashard import GrowthPolicy
from dynashard.keys import WeightedShards, validate_shard_count
from dynashard.resharding import DEFAULT_WRITE_UNITS_PER_SECOND
from incidents.account_limits import MAX_MAINTENANCE_WINDOWS, AccountLimits, Limited
from incidents.keys import DEFAULT_STATE_SHARDS, DEFAULT_SUMMARY_SHARDS, ShardConfig
from incidents.models import State
from incidents.timers.fairness import DEFAULT_FIRINGS_PER_MINUTE

SUMMARY_SHARDS = "SUMMARY_SHARDS"
STATE_SHARDS = "STATE_SHARDS"
PARTICIPANT_DEFAULT_SHARDS = "PARTICIPANT_DEFAULT_SHARDS"
PARTICIPANT_MAX_SHARDS = "PARTICIPANT_MAX_SHARDS"
CORS_ALLOWED_ORIGINS = "CORS_ALLOWED_ORIGINS"
EVENT_RETENTION_DAYS = "EVENT_RETENTION_DAYS"
SHARD_MOVER_WRITE_UNITS = "SHARD_MOVER_WRITE_UNITS"
ALERTS_PER_MINUTE = "ALERTS_PER_MINUTE"
DEFAULT_ALERTS_PER_MINUTE = 6000
"""An account's alerts a minute: a storm of 5,000 a minute passes, a runaway loop does not."""
INTEGRATION_ALERTS_PER_MINUTE = "INTEGRATION_ALERTS_PER_MINUTE"
DEFAULT_INTEGRATION_ALERTS_PER_MINUTE = 3000
"""One integration key's alerts a minute: one runaway source cannot spend its account's
whole quota."""
AUTHORIZER_CACHE_SECONDS = "AUTHORIZER_CACHE_SECONDS"
DEFAULT_AUTHORIZER_CACHE_SECONDS = 60
"""How long API Gateway keeps the authorizer's answer for one ``Authorization`` value: a
revoked API key works at most this long after."""
MAX_AUTHORIZER_CACHE_SECONDS = 3600
"""API Gateway's longest authorizer cache."""
USER_POOL_ID = "USER_POOL_ID"
USER_POOL_CLIENT_ID = "USER_POOL_CLIENT_ID"
"""The pool and app client whose ID tokens the authorizer accepts."""
API_REQUESTS_PER_MINUTE = "API_REQUESTS_PER_MINUTE"
DEFAULT_API_REQUESTS_PER_MINUTE = 3000
"""An account's API requests a minute (people and machine keys together): 50 a second."""
API_KEY_QUOTA_PERCENT = "API_KEY_QUOTA_PERCENT"
DEFAULT_API_KEY_QUOTA_PERCENT = 50
"""One API key's requests a minute, as a share of its account's: a key looping at full speed
is stopped by its own bucket and leaves the rest to the account's people."""


class SettingsError(ValueError):
    """A setting in the environment that the functions must not run with."""


@dataclass(frozen=True)
class ShardSettings:
    """Summary and state shard counts, and how far participants' counts may grow."""

    summary_shards: int = DEFAULT_SUMMARY_SHARDS
    state_shards: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_STATE_SHARDS))
    participant_default_shards: int = 1
    participant_max_shards: int = 64

    def __post_init__(self) -> None:
        try:
            validate_shard_count(self.summary_shards)
        except ValueError as error:
            raise SettingsError(f"{SUMMARY_SHARDS}: {error}") from None
        states = {state.value for state in State}
        if set(self.state_shards) != states:
            raise SettingsError(
                f"{STATE_SHARDS} must give a count for exactly {sorted(states)}, "
                f"got {sorted(self.state_shards)}"
            )
        try:
            WeightedShards(self.state_shards)
        except ValueError as error:
            raise SettingsError(f"{STATE_SHARDS}: {error}") from None
        try:
            self.participants()
        except ValueError as error:
            raise SettingsError(
                f"{PARTICIPANT_DEFAULT_SHARDS} / {PARTICIPANT_MAX_SHARDS}: {error}"
            ) from None

    def shard_config(self) -> ShardConfig:
        """The fixed counts the keys are built with."""
        return ShardConfig(
            summary_shards=self.summary_shards, state_shards=WeightedShards(self.state_shards)
        )

    def participants(self) -> GrowthPolicy:
        """The dynamic counts' policy for participants' partitions."""
        return GrowthPolicy(
            default_count=self.participant_default_shards, max_count=self.participant_max_shards
        )

    def to_environment(self) -> dict[str, str]:
        """The functions' environment variables (what the CDK stack sets)."""
        return {
            SUMMARY_SHARDS: str(self.summary_shards),
            STATE_SHARDS: json.dumps(dict(self.state_shards), sort_keys=True),
            PARTICIPANT_DEFAULT_SHARDS: str(self.participant_default_shards),
            PARTICIPANT_MAX_SHARDS: str(self.participant_max_shards),
        }

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> ShardSettings:
        """The settings in `env`; a variable that is absent takes its default (local runs)."""
        defaults = cls()
        return cls(
            summary_shards=_integer(env, SUMMARY_SHARDS, defaults.summary_shards),
            state_shards=_counts(env, STATE_SHARDS, defaults.state_shards),
            participant_default_shards=_integer(
                env, PARTICIPANT_DEFAULT_SHARDS, defaults.participant_default_shards
            ),
            participant_max_shards=_integer(
                env, PARTICIPANT_MAX_SHARDS, defaults.participant_max_shards
            ),
        )


def _integer(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name)
    if text is None:
        return default
    if not text.strip().isdecimal():
        raise SettingsError(f"{name} must be a whole number, got {text[:40]!r}")
    return int(text)


def _counts(env: Mapping[str, str], name: str, default: Mapping[str, int]) -> dict[str, int]:
    text = env.get(name)
    if text is None:
        return dict(default)
    try:
        counts = json.loads(text)
    except json.JSONDecodeError:
        raise SettingsError(f"{name} must be a JSON object of counts, got {text[:60]!r}") from None
    valid = isinstance(counts, dict) and all(
        isinstance(count, int) and not isinstance(count, bool) for count in counts.values()
    )
    if not valid:
        raise SettingsError(f"{name} must map each state to a whole number, got {text[:60]!r}")
    return {str(state): int(count) for state, count in counts.items()}


def event_retention_days(env: Mapping[str, str]) -> int | None:
    """Days a timeline event is kept (`EVENT_RETENTION_DAYS`); unset or empty: for ever."""
    text = env.get(EVENT_RETENTION_DAYS, "").strip()
    if not text:
        return None
    days = _integer(env, EVENT_RETENTION_DAYS, 0)
    if days < 1:
        raise SettingsError(f"{EVENT_RETENTION_DAYS} must be at least 1 day, got {days}")
    return days


def mover_write_units(env: Mapping[str, str]) -> int:
    """The shard mover's pace in write units a second (`SHARD_MOVER_WRITE_UNITS`)."""
    units = _integer(env, SHARD_MOVER_WRITE_UNITS, int(DEFAULT_WRITE_UNITS_PER_SECOND))
    if units < 1:
        raise SettingsError(f"{SHARD_MOVER_WRITE_UNITS} must be at least 1, got {units}")
    return units


def authorizer_cache_seconds(env: Mapping[str, str]) -> int:
    """Seconds the authorizer's answers are cached (`AUTHORIZER_CACHE_SECONDS`; 0: never)."""
    seconds = _integer(env, AUTHORIZER_CACHE_SECONDS, DEFAULT_AUTHORIZER_CACHE_SECONDS)
    if seconds > MAX_AUTHORIZER_CACHE_SECONDS:
        raise SettingsError(
            f"{AUTHORIZER_CACHE_SECONDS} must be at most {MAX_AUTHORIZER_CACHE_SECONDS}, "
            f"got {seconds}"
        )
    return seconds


@dataclass(frozen=True)
class QuotaSettings:
    """Requests a minute: each account's on the API and on ``POST /alerts``, and each
    integration key's on ``POST /alerts``; and each API key's share of its account's."""

    api_requests: int = DEFAULT_API_REQUESTS_PER_MINUTE
    api_key_percent: int = DEFAULT_API_KEY_QUOTA_PERCENT
    alerts: int = DEFAULT_ALERTS_PER_MINUTE
    integration_alerts: int = DEFAULT_INTEGRATION_ALERTS_PER_MINUTE

    def to_environment(self) -> dict[str, str]:
        """The variables `quota_settings` reads back."""
        return {variable: str(getattr(self, name)) for name, variable in QUOTA_VARIABLES.items()}


def quota_settings(env: Mapping[str, str]) -> QuotaSettings:
    """The stage's quotas; each at least 1 (and a share at most 100 %)."""
    defaults = QuotaSettings()
    values = {}
    for name, variable in QUOTA_VARIABLES.items():
        value = _integer(env, variable, getattr(defaults, name))
        if value < 1:
            raise SettingsError(f"{variable} must be at least 1, got {value}")
        values[name] = value
    if values["api_key_percent"] > 100:
        raise SettingsError(
            f"{API_KEY_QUOTA_PERCENT} must be at most 100, got {values['api_key_percent']}"
        )
    return QuotaSettings(**values)


QUOTA_VARIABLES = {
    "api_requests": API_REQUESTS_PER_MINUTE,
    "api_key_percent": API_KEY_QUOTA_PERCENT,
    "alerts": ALERTS_PER_MINUTE,
    "integration_alerts": INTEGRATION_ALERTS_PER_MINUTE,
}


LIMIT_VARIABLES = {
    Limited.HEARTBEATS: "HEARTBEATS_PER_ACCOUNT",
    Limited.MAINTENANCE_WINDOWS: "MAINTENANCE_WINDOWS_PER_ACCOUNT",
    Limited.SCHEDULES: "SCHEDULES_PER_ACCOUNT",
    Limited.ESCALATION_POLICIES: "ESCALATION_POLICIES_PER_ACCOUNT",
}


def account_limits(env: Mapping[str, str]) -> AccountLimits:
    """The stage's account limits; each at least 1, and windows at most what one alert's
    read of the live set holds (`MAX_MAINTENANCE_WINDOWS`)."""
    defaults = AccountLimits()
    values = {}
    for subject, variable in LIMIT_VARIABLES.items():
        value = _integer(env, variable, defaults.of(subject))
        if value < 1:
            raise SettingsError(f"{variable} must be at least 1, got {value}")
        values[subject.value] = value
    windows = values[Limited.MAINTENANCE_WINDOWS.value]
    if windows > MAX_MAINTENANCE_WINDOWS:
        raise SettingsError(
            f"{LIMIT_VARIABLES[Limited.MAINTENANCE_WINDOWS]} must be at most "
            f"{MAX_MAINTENANCE_WINDOWS} (every alert reads them all), got {windows}"
        )
    return AccountLimits(**values)


def limits_environment(limits: AccountLimits) -> dict[str, str]:
    """The variables `account_limits` reads back."""
    return {variable: str(limits.of(subject)) for subject, variable in LIMIT_VARIABLES.items()}


def mover_environment(units: int) -> dict[str, str]:
    """The variable `mover_write_units` reads."""
    return {SHARD_MOVER_WRITE_UNITS: str(units)}


def retention_environment(days: int | None) -> dict[str, str]:
    """The variable `event_retention_days` reads (none for ever)."""
    return {} if days is None else {EVENT_RETENTION_DAYS: str(days)}


def origins_environment(origins: Sequence[str]) -> dict[str, str]:
    """The browser origins allowed to read responses, as the functions' environment."""
    return {CORS_ALLOWED_ORIGINS: json.dumps(list(origins))} if origins else {}


ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:\d{1,5})?")
"""A browser origin as the Origin header carries it."""


def allowed_origins(env: Mapping[str, str]) -> list[str]:
    """The origins in `env` (none: no CORS headers at all)."""
    text = env.get(CORS_ALLOWED_ORIGINS)
    if not text:
        return []
    try:
        origins = json.loads(text)
    except json.JSONDecodeError:
        origins = None
    if not (isinstance(origins, list) and all(isinstance(o, str) for o in origins)):
        raise SettingsError(
            f'{CORS_ALLOWED_ORIGINS} must be a JSON list of origins, e.g. ["http://localhost:3000"]'
        )
    wrong = [o for o in origins if not ORIGIN.fullmatch(o)]
    if wrong:
        raise SettingsError(
            f"{CORS_ALLOWED_ORIGINS}: {wrong[0]!r} is not an origin "
            "(scheme://host[:port], no path or trailing slash)"
        )
    return origins


DELIVERY_QUEUE_URL = "DELIVERY_QUEUE_URL"
EVENT_BUS_NAME = "EVENT_BUS_NAME"
WEBHOOK_ALLOW_LOOPBACK = "WEBHOOK_ALLOW_LOOPBACK"


def allow_loopback(env: Mapping[str, str]) -> bool:
    """Whether webhooks may post to this machine (``make dev`` only: ``1``)."""
    value = env.get(WEBHOOK_ALLOW_LOOPBACK, "")
    if value not in {"", "0", "1"}:
        raise SettingsError(f"{WEBHOOK_ALLOW_LOOPBACK} must be 0 or 1, got {value!r}")
    return value == "1"


PAGE_EMAIL_SENDER = "PAGE_EMAIL_SENDER"
"""The verified address pages are emailed from (none: email pages fail, saying so)."""
PAGE_EMAIL_CONFIGURATION_SET = "PAGE_EMAIL_CONFIGURATION_SET"
"""The SES configuration set each page's email goes through (its events are receipts)."""
PAGE_ORIGINATION_IDENTITY = "PAGE_ORIGINATION_IDENTITY"
"""The End User Messaging phone number or pool pages are texted and called from (none: SMS
and voice pages fail, saying so)."""
PAGE_SMS_CONFIGURATION_SET = "PAGE_SMS_CONFIGURATION_SET"
"""The End User Messaging configuration set texts and calls go through (their receipts
come on the default event bus: `stacks.receipts`)."""
PUBLIC_API_URL = "PUBLIC_API_URL"
"""The API's URL as people reach it: pages' links point below it (none: pages carry no
link)."""
PAGE_SPEND_CAPS = {"sms": "PAGE_SMS_SPEND_CAP_USD", "voice": "PAGE_VOICE_SPEND_CAP_USD"}
"""Each account's monthly cap on texts and on calls, in whole dollars (by channel)."""
DEFAULT_SPEND_CAP_USD = 50


def spend_caps(env: Mapping[str, str]) -> dict[str, int]:
    """Each channel's monthly cap an account (`PAGE_SPEND_CAPS`, at least 1 dollar)."""
    caps = {channel: _integer(env, name, DEFAULT_SPEND_CAP_USD)
            for channel, name in PAGE_SPEND_CAPS.items()}  # fmt: skip
    for channel, cap in caps.items():
        if cap < 1:
            raise SettingsError(f"{PAGE_SPEND_CAPS[channel]} must be at least 1, got {cap}")
    return caps


def spend_caps_environment(caps: Mapping[str, int]) -> dict[str, str]:
    """The variables `spend_caps` reads."""
    return {PAGE_SPEND_CAPS[channel]: str(cap) for channel, cap in caps.items()}


TIMER_QUEUE_URL = "TIMER_QUEUE_URL"
"""The firing queue the sweep hands due timers to (`incidents.timers.firing_queue`)."""
TIMER_FIRINGS_PER_MINUTE = "TIMER_FIRINGS_PER_MINUTE"
"""An account's timers fired a run (`incidents.timers.fairness`)."""


def timer_firings_per_minute(env: Mapping[str, str]) -> int:
    """An account's firing rate (`TIMER_FIRINGS_PER_MINUTE`, at least 1: an account whose
    timers never fire would never be told)."""
    rate = _integer(env, TIMER_FIRINGS_PER_MINUTE, DEFAULT_FIRINGS_PER_MINUTE)
    if rate < 1:
        raise SettingsError(f"{TIMER_FIRINGS_PER_MINUTE} must be at least 1, got {rate}")
    return rate


def timers_environment(queue_url: str, firings_per_minute: int) -> dict[str, str]:
    """The variables the sweep reads."""
    return {TIMER_QUEUE_URL: queue_url, TIMER_FIRINGS_PER_MINUTE: str(firings_per_minute)}
