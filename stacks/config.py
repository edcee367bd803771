"""Per-stage settings, read from the ``stages`` entry of ``cdk.json``'s context.

``cdk deploy -c stage=prod`` picks ``stages.prod``; anything missing there takes the
defaults below. Shard counts are part of the data's address: ``summaryShards`` must never
change once a stage holds incidents (a GET computes the shard from it), while the state
counts may only grow by doubling (readers always cover the configured count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_logs as logs

from dynashard.resharding import DEFAULT_WRITE_UNITS_PER_SECOND
from incidents.account_limits import AccountLimits
from incidents.events_out.delivery_messages import SENDER_MAX_CONCURRENCY
from incidents.keys import DEFAULT_STATE_SHARDS, DEFAULT_SUMMARY_SHARDS
from incidents.timers.fairness import DEFAULT_FIRINGS_PER_MINUTE
from lambdas.routes import Group
from lambdas.settings import (
    DEFAULT_ALERTS_PER_MINUTE,
    DEFAULT_API_KEY_QUOTA_PERCENT,
    DEFAULT_API_REQUESTS_PER_MINUTE,
    DEFAULT_AUTHORIZER_CACHE_SECONDS,
    DEFAULT_INTEGRATION_ALERTS_PER_MINUTE,
    DEFAULT_SPEND_CAP_USD,
    MAX_AUTHORIZER_CACHE_SECONDS,
    QuotaSettings,
    SettingsError,
    ShardSettings,
    account_limits,
    allowed_origins,
    event_retention_days,
    limits_environment,
    origins_environment,
    retention_environment,
)

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
ORIGINATION_IDENTITY = re.compile(
    r"arn:aws[a-z-]*:sms-voice:[a-z0-9-]+:[0-9]{12}:(phone-number|pool)/[A-Za-z0-9_-]+"
)
"""An End User Messaging phone number's or pool's ARN (a sender id cannot call)."""
DOMAIN = re.compile(r"(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
"""A lower-case DNS name of two labels or more (SES verifies a domain identity by DKIM)."""
REMOVAL_POLICIES = {"retain": RemovalPolicy.RETAIN, "destroy": RemovalPolicy.DESTROY}

DEFAULT_TIMER_WORKERS = 8


SUPPORT_FUNCTIONS = (
    "authorizer",
    "shard_mover",
    "sweeper",
    "timer_worker",
    "publisher",
    "sender",
    "stream_recovery",
    "receipts",
)
"""Functions besides the handler groups whose concurrency a stage bounds: the authorizer
(one call per token a cache's life), the scheduled shard mover and the timers' sweep (one
run at a time), the timers' workers, events out's publisher (one batch a stream shard),
sender and stream recovery, and the providers' receipts: a storm in one never takes the
concurrency the API needs."""


@dataclass(frozen=True)
class StageConfig:
    """Everything that differs between stages."""

    stage: str
    removal_policy: str = "retain"
    summary_shards: int = DEFAULT_SUMMARY_SHARDS
    state_shards: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_STATE_SHARDS))
    participant_default_shards: int = 1
    participant_max_shards: int = 64
    log_retention: str = "ONE_MONTH"
    throttle_rate_limit: int = 100
    throttle_burst_limit: int = 200
    cors_origins: tuple[str, ...] = ()
    alarm_emails: tuple[str, ...] = ()
    alarm_https_endpoint: str | None = None
    sign_in_callback_urls: tuple[str, ...] = ()
    sign_in_logout_urls: tuple[str, ...] = ()
    reserved_concurrency: dict[str, int] = field(default_factory=dict)
    account_concurrency_limit: int = 1000
    table_max_read_request_units: int = 4000
    table_max_write_request_units: int = 2000
    alarm_integration_key_secret: str | None = None
    """The Secrets Manager secret holding an integration's key: with it, the account's
    CloudWatch alarms trigger and resolve alerts through ``POST /alerts`` (none: off)."""
    alerts_per_minute: int = DEFAULT_ALERTS_PER_MINUTE
    """Each account's alerts a minute (``POST /alerts``); above it, 429 ``rate_limited``."""
    integration_alerts_per_minute: int = DEFAULT_INTEGRATION_ALERTS_PER_MINUTE
    """Each integration key's alerts a minute (within its account's)."""
    api_requests_per_minute: int = DEFAULT_API_REQUESTS_PER_MINUTE
    """Each account's requests a minute on every other route, people and API keys alike."""
    api_key_quota_percent: int = DEFAULT_API_KEY_QUOTA_PERCENT
    """Each API key's requests a minute, as a share of its account's (1 to 100): taken from
    the key's own bucket first, so a looping key never spends the account's people's share."""
    authorizer_cache_seconds: int = DEFAULT_AUTHORIZER_CACHE_SECONDS
    """How long API Gateway caches the authorizer's answer for one ``Authorization`` value
    (0 to 3,600): a revoked API key keeps working at most this long."""
    shard_mover_write_units: int = int(DEFAULT_WRITE_UNITS_PER_SECOND)
    """The shard mover's pace: write units a second it takes from the partitions it fills
    (a tenth of one partition's 1,000 by default)."""
    event_retention_days: int | None = None
    """Days the timeline's events are kept (the table's TTL deletes them after); None: for
    ever (the default: a timeline is a record)."""
    heartbeats_per_account: int = AccountLimits().heartbeats
    """Heartbeats one account holds at most (one more: 409 ``limit_reached``)."""
    maintenance_windows_per_account: int = AccountLimits().maintenance_windows
    """Maintenance windows not yet ended one account holds at most (at most 1,000: every
    alert reads them all)."""
    schedules_per_account: int = AccountLimits().schedules
    """Schedules one account holds at most."""
    escalation_policies_per_account: int = AccountLimits().escalation_policies
    """Escalation policies one account holds at most."""
    timer_firings_per_minute: int = DEFAULT_FIRINGS_PER_MINUTE
    """Each account's timers the sweep hands on a minute; beyond it they wait, due, in the
    table, without delaying other accounts' (at least 1)."""
    page_email_domain: str | None = None
    """The domain pages are emailed from (``pages@`` it), verified in SES by the stack's
    identity (its DKIM records to publish); none: email pages fail, saying so."""
    page_phone_number: str | None = None
    """The ARN of the End User Messaging phone number (or pool) pages are texted and called
    from; the stack adds a configuration set and lets the sender send through them alone;
    none: SMS and voice pages fail, saying so."""
    sms_spend_cap_per_account: int = DEFAULT_SPEND_CAP_USD
    """Dollars one account may spend on texts a month (the most each may cost reserved
    before it is sent); past it, SMS pages fail, saying so."""
    voice_spend_cap_per_account: int = DEFAULT_SPEND_CAP_USD
    """The same for calls."""
    timer_workers: int = DEFAULT_TIMER_WORKERS
    """Firing-queue batches fired at once (the worker's ``MaximumConcurrency``, 2 to 1,000):
    timers a minute grow with it."""
    snap_start: bool = False
    """Whether the API's handlers and its authorizer start from a SnapStart snapshot of
    their initialized runtime (decision 020): API Gateway then invokes each one's ``live``
    alias, the version published with it. Off: every cold start imports, as before."""

    def __post_init__(self) -> None:
        if self.removal_policy not in REMOVAL_POLICIES:
            raise ValueError(
                f"stages.{self.stage}.removalPolicy must be one of {sorted(REMOVAL_POLICIES)}"
            )
        self.shards()  # raises on counts the functions would refuse at cold start
        try:  # origins the functions would refuse at cold start
            allowed_origins(self.lambda_environment())
        except SettingsError as error:
            raise ValueError(f"stages.{self.stage}.corsOrigins: {error}") from None
        if self.log_retention not in logs.RetentionDays.__members__:
            raise ValueError(
                f"stages.{self.stage}.logRetention must name a logs.RetentionDays member "
                f"(ONE_WEEK, ONE_MONTH, ONE_YEAR, ...), got {self.log_retention!r}"
            )
        self._check_notifications()
        self._check_capacity()
        if not isinstance(self.snap_start, bool):
            raise ValueError(f"stages.{self.stage}.snapStart must be true or false")
        try:
            event_retention_days(self.lambda_environment())
        except SettingsError as error:
            raise ValueError(f"stages.{self.stage}.eventRetentionDays: {error}") from None
        try:  # the positive integers are checked above: only the windows' maximum is left
            account_limits(self.lambda_environment())
        except SettingsError as error:
            raise ValueError(f"stages.{self.stage}.maintenanceWindowsPerAccount: {error}") from None

    def _check_notifications(self) -> None:
        for email in self.alarm_emails:
            if not EMAIL.fullmatch(email):
                raise ValueError(f"stages.{self.stage}.alarmEmails: {email!r} is not an address")
        domain = self.page_email_domain
        if domain is not None and not DOMAIN.fullmatch(domain):
            raise ValueError(f"stages.{self.stage}.pageEmailDomain: {domain!r} is not a domain")
        number = self.page_phone_number
        if number is not None and not ORIGINATION_IDENTITY.fullmatch(number):
            raise ValueError(
                f"stages.{self.stage}.pagePhoneNumber: {number!r} is not the ARN of an End "
                "User Messaging phone number or pool (arn:aws:sms-voice:<region>:<account>:"
                "phone-number/<id>)"
            )
        if self.alarm_https_endpoint and not self.alarm_https_endpoint.startswith("https://"):
            raise ValueError(f"stages.{self.stage}.alarmHttpsEndpoint must be an https:// URL")
        for url in (*self.sign_in_callback_urls, *self.sign_in_logout_urls):
            if not url.startswith(("https://", "http://localhost:", "http://localhost/")):
                raise ValueError(
                    f"stages.{self.stage}.signIn*Urls: {url!r} must be https:// "
                    "(http://localhost only for local front ends), as Cognito requires"
                )

    def _check_capacity(self) -> None:
        groups = {group.value for group in Group} | set(SUPPORT_FUNCTIONS)
        unknown = sorted(set(self.reserved_concurrency) - groups)
        if unknown:
            raise ValueError(
                f"stages.{self.stage}.reservedConcurrency: unknown functions {unknown}; "
                f"known: {sorted(groups)}"
            )
        limits = {
            "accountConcurrencyLimit": self.account_concurrency_limit,
            "tableMaxReadRequestUnits": self.table_max_read_request_units,
            "tableMaxWriteRequestUnits": self.table_max_write_request_units,
            "shardMoverWriteUnits": self.shard_mover_write_units,
            "alertsPerMinute": self.alerts_per_minute,
            "integrationAlertsPerMinute": self.integration_alerts_per_minute,
            "apiRequestsPerMinute": self.api_requests_per_minute,
            "apiKeyQuotaPercent": self.api_key_quota_percent,
            "heartbeatsPerAccount": self.heartbeats_per_account,
            "maintenanceWindowsPerAccount": self.maintenance_windows_per_account,
            "schedulesPerAccount": self.schedules_per_account,
            "escalationPoliciesPerAccount": self.escalation_policies_per_account,
            "timerFiringsPerMinute": self.timer_firings_per_minute,
            "smsSpendCapPerAccount": self.sms_spend_cap_per_account,
            "voiceSpendCapPerAccount": self.voice_spend_cap_per_account,
            **{f"reservedConcurrency.{k}": v for k, v in self.reserved_concurrency.items()},
        }
        for name, value in limits.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"stages.{self.stage}.{name} must be a positive integer")
        if self.api_key_quota_percent > 100:
            raise ValueError(f"stages.{self.stage}.apiKeyQuotaPercent must be at most 100")
        workers = self.timer_workers
        if not isinstance(workers, int) or isinstance(workers, bool) or not 2 <= workers <= 1000:
            raise ValueError(  # SQS event sources' MaximumConcurrency
                f"stages.{self.stage}.timerWorkers must be 2 to 1000, got {workers!r}"
            )
        cache = self.authorizer_cache_seconds
        if not isinstance(cache, int) or not 0 <= cache <= MAX_AUTHORIZER_CACHE_SECONDS:
            raise ValueError(
                f"stages.{self.stage}.authorizerCacheSeconds must be 0 to "
                f"{MAX_AUTHORIZER_CACHE_SECONDS}"
            )
        self._check_queue_consumers()
        if sum(self.reserved_concurrency.values()) > self.account_concurrency_limit - 100:
            raise ValueError(
                f"stages.{self.stage}.reservedConcurrency: Lambda keeps 100 of the account's "
                f"{self.account_concurrency_limit} unreserved; reserve at most "
                f"{self.account_concurrency_limit - 100} in all"
            )

    def _check_queue_consumers(self) -> None:
        """A queue's consumer reserves at least its event source's maximum concurrency: with
        less, Lambda's pollers are throttled and messages wait, then retry, for nothing."""
        needs = {"sender": SENDER_MAX_CONCURRENCY, "timer_worker": self.timer_workers}
        for function, least in needs.items():
            reserved = self.reserved(function)
            if reserved is not None and reserved < least:
                raise ValueError(
                    f"stages.{self.stage}.reservedConcurrency.{function} must be at least "
                    f"{least}, its queue's maximum concurrency; got {reserved}"
                )

    def reserved(self, function: str) -> int | None:
        """The reserved concurrency of a function: a handler group's, or one of
        `SUPPORT_FUNCTIONS` (None: the account's pool)."""
        return self.reserved_concurrency.get(str(function))

    def shards(self) -> ShardSettings:
        """The stage's shard settings, as the functions will read them."""
        return ShardSettings(
            summary_shards=self.summary_shards,
            state_shards=self.state_shards,
            participant_default_shards=self.participant_default_shards,
            participant_max_shards=self.participant_max_shards,
        )

    def lambda_environment(self) -> dict[str, str]:
        """What `lambdas.settings` reads back at cold start to build the same store."""
        return {
            **self.shards().to_environment(),
            **origins_environment(self.cors_origins),
            **retention_environment(self.event_retention_days),
            **QuotaSettings(
                api_requests=self.api_requests_per_minute,
                api_key_percent=self.api_key_quota_percent,
                alerts=self.alerts_per_minute,
                integration_alerts=self.integration_alerts_per_minute,
            ).to_environment(),
            **limits_environment(self.limits()),
        }

    def spend_caps(self) -> dict[str, int]:
        """Each channel's monthly cap an account, as the sender will read them."""
        return {"sms": self.sms_spend_cap_per_account, "voice": self.voice_spend_cap_per_account}

    def limits(self) -> AccountLimits:
        """The stage's account limits, as the functions will read them."""
        return AccountLimits(
            heartbeats=self.heartbeats_per_account,
            maintenance_windows=self.maintenance_windows_per_account,
            schedules=self.schedules_per_account,
            escalation_policies=self.escalation_policies_per_account,
        )

    @property
    def removal(self) -> RemovalPolicy:
        """The removal policy of the table, the user pool and the log groups."""
        return REMOVAL_POLICIES[self.removal_policy]

    @property
    def retention(self) -> logs.RetentionDays:
        """Retention of every log group of the stage."""
        return logs.RetentionDays[self.log_retention]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_KEYS = {_camel(f.name): f.name for f in fields(StageConfig) if f.name != "stage"}
"""``cdk.json`` spells each setting in camelCase: ``summaryShards`` is ``summary_shards``."""


def stage_config(stage: str, stages: dict[str, Any] | None) -> StageConfig:
    """The settings of `stage` from the ``stages`` context (unknown keys are errors)."""
    raw = dict((stages or {}).get(stage) or {})
    unknown = sorted(set(raw) - set(_KEYS))
    if unknown:
        raise ValueError(f"stages.{stage}: unknown settings {unknown}; known: {sorted(_KEYS)}")
    values = {_KEYS[name]: value for name, value in raw.items()}
    for name in ("cors_origins", "alarm_emails", "sign_in_callback_urls", "sign_in_logout_urls"):
        if name in values:
            values[name] = tuple(values[name])
    return StageConfig(stage=stage, **values)
