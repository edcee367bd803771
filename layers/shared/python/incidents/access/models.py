"""API keys as the API takes and shows them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from incidents.models import KSUID, RESPONSE, Timestamp
from incidents.requests import CleanName

API_KEY_ID = rf"^key_{KSUID}$"
Scope = Literal[
    "incidents:read",
    "incidents:write",
    "teams:read",
    "teams:write",
    "webhooks:manage",
    "integrations:manage",
    "schedules:read",
    "schedules:manage",
    "users:manage",
    "escalation_policies:read",
    "escalation_policies:manage",
]
"""What a key may call: reads (GET) or changes of incidents (and the account's events and
lists), of teams and profiles, of schedules (who is on call: a read); webhooks,
integrations and users' contact methods and notification rules, whole; escalation
policies (reads, or changes). ``/me`` and ``/api-keys`` are for people only."""
SCOPES: tuple[str, ...] = Scope.__args__  # type: ignore[attr-defined]


class NewApiKey(BaseModel):
    """A key for a machine of the account (CI, a script), with what it may do."""

    model_config = ConfigDict(extra="forbid")

    name: CleanName
    scopes: Annotated[list[Scope], Field(min_length=1, max_length=len(SCOPES))]


class ApiKey(BaseModel):
    """An API key as the API shows it (the key itself only on creation)."""

    model_config = RESPONSE

    id: str
    name: str
    scopes: list[Scope]
    key_hint: str
    """The key's last four characters, to tell keys apart."""
    created_at: Timestamp
    last_used_at: Timestamp | None


class ApiKeyWithKey(ApiKey):
    """An API key with its key: shown once, when created."""

    key: str


class ApiKeyList(BaseModel):
    """The account's API keys, oldest first (never the keys themselves)."""

    model_config = RESPONSE

    items: list[ApiKey]
