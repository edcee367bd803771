"""The stage's quotas as the functions read them: an API key's bucket is its share of the
account's, never more than the whole and never nothing."""

from __future__ import annotations

import pytest

from lambdas.http.quotas import Quotas
from lambdas.settings import QuotaSettings, SettingsError, quota_settings


def test_an_api_key_gets_its_share_of_the_accounts_quota() -> None:
    settings = quota_settings({"API_REQUESTS_PER_MINUTE": "600", "API_KEY_QUOTA_PERCENT": "25"})
    policies = Quotas.of(settings)
    assert (policies.api.limit, policies.api_key.limit) == (600, 150)
    assert policies.api_key.name == "api-key"


def test_a_share_rounds_down_but_never_to_nothing() -> None:
    policies = Quotas.of(QuotaSettings(api_requests=3, api_key_percent=10))
    assert policies.api_key.limit == 1


def test_the_default_share_is_half_and_reads_back() -> None:
    settings = QuotaSettings()
    assert settings.api_key_percent == 50
    assert quota_settings(settings.to_environment()) == settings


@pytest.mark.parametrize(("value", "says"), [("0", "at least 1"), ("101", "at most 100")])
def test_a_share_outside_1_to_100_percent_is_refused(value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=f"API_KEY_QUOTA_PERCENT must be {says}"):
        quota_settings({"API_KEY_QUOTA_PERCENT": value})
