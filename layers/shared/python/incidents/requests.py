"""Request bodies of the commands, validated by pydantic (and documented in OpenAPI)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from incidents.models import (
    TEAM_ID,
    USER_ID,
    Name,
    ParticipantId,
    Role,
    Severity,
    Status,
    TeamId,
    Title,
    UserId,
)
from incidents.text import CLEAN_CHARACTERS, REFUSED_CLASS, TEXT_RULES, clean_text

MAX_LIST = 100
Clean = AfterValidator(clean_text)
"""NFC, no control or bidirectional characters, something visible (`incidents.text`)."""
DOCUMENTED_TEXT = Field(
    description=TEXT_RULES,
    json_schema_extra={"pattern": CLEAN_CHARACTERS},
)
"""The rule in the document: the characters as a pattern, the rest in words (a schema cannot
say "something visible"); `clean_text` enforces all of it."""
CleanTitle = Annotated[Title, Clean, DOCUMENTED_TEXT]
CleanName = Annotated[Name, Clean, DOCUMENTED_TEXT]
EMAIL = f"^[^@\\s{REFUSED_CLASS}]+@[^@\\s{REFUSED_CLASS}]+$"
Email = Annotated[str, Field(max_length=254, pattern=EMAIL, description=TEXT_RULES), Clean]


class CreateIncident(BaseModel):
    """A new incident; the caller becomes its creator participant."""

    model_config = ConfigDict(extra="forbid")

    title: CleanTitle
    severity: Severity = Severity.SEV3
    status: Status = Status.TRIGGERED
    details: dict[str, Any] = Field(default_factory=dict)
    assignees: list[UserId] = Field(default_factory=list, max_length=MAX_LIST)
    teams: list[TeamId] = Field(default_factory=list, max_length=MAX_LIST)


def _changes_only(schema: dict[str, Any]) -> None:
    """The document says what the validator checks: at least one field, none of them null."""
    for field in schema["properties"].values():
        field.pop("default", None)
        choices = field.pop("anyOf", None)
        if choices:
            field.update(next(c for c in choices if c.get("type") != "null"))
    schema["minProperties"] = 1


class UpdateIncident(BaseModel):
    """Fields to change; at least one, none null."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_changes_only)

    title: CleanTitle | None = None
    status: Status | None = None
    severity: Severity | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if not self.model_fields_set:
            raise ValueError("give at least one of title, status, severity")
        nulls = sorted(name for name in self.model_fields_set if getattr(self, name) is None)
        if nulls:
            raise ValueError(f"{', '.join(nulls)} cannot be null")
        return self


JoinRole = Literal[Role.ASSIGNEE, Role.RESPONDER, Role.TEAM]
"""Roles a participant can be added with (``creator`` is given at creation only)."""


def _participant_kind(title: str, pattern: str, roles: list[str]) -> dict[str, Any]:
    return {
        "title": title,
        "type": "object",
        "additionalProperties": False,
        "required": ["participant_id", "role"],
        "properties": {
            "participant_id": {"type": "string", "pattern": pattern},
            "role": {"type": "string", "enum": roles},
        },
    }


def _one_kind_of_participant(schema: dict[str, Any]) -> None:
    """Documented as exactly one of two complete shapes, told apart by ``role`` (a
    discriminator), so that generated clients get two exact types instead of one whose
    fields are all optional."""
    kinds = [
        _participant_kind("TeamParticipant", TEAM_ID, ["team"]),
        _participant_kind("UserParticipant", USER_ID, ["assignee", "responder"]),
    ]
    description = schema.get("description", "")
    schema.clear()
    schema.update({"title": "AddParticipant", "description": description, "oneOf": kinds})


class AddParticipant(BaseModel):
    """A user (assignee or responder) or a team (role ``team``) joining an incident."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_one_kind_of_participant)

    participant_id: ParticipantId
    role: JoinRole

    @model_validator(mode="after")
    def _role_fits_kind(self) -> Self:
        if self.participant_id.startswith("team_") != (self.role is Role.TEAM):
            raise ValueError("teams join with role 'team'; users as 'assignee' or 'responder'")
        return self


NOTE_MAX_CHARACTERS = 1000
NOTE_MAX_BYTES = 2000
NOTE_RULES = (
    f"{TEXT_RULES} At most {NOTE_MAX_CHARACTERS:,} characters and {NOTE_MAX_BYTES:,} bytes "
    "of UTF-8, counted after normalization (what is stored), so that a note event stays "
    "one write unit."
)


def note_text(value: str) -> str:
    """A note as stored: clean (`clean_text`), then within its limits."""
    text = clean_text(value).strip()
    if not text:
        raise ValueError("must contain a visible character")
    if len(text) > NOTE_MAX_CHARACTERS or len(text.encode()) > NOTE_MAX_BYTES:
        raise ValueError(
            f"is {len(text):,} characters ({len(text.encode()):,} bytes of UTF-8) once "
            f"normalized; at most {NOTE_MAX_CHARACTERS:,} ({NOTE_MAX_BYTES:,} bytes)"
        )
    return text


NoteText = Annotated[
    str,
    AfterValidator(note_text),
    Field(
        min_length=1,
        description=NOTE_RULES,
        json_schema_extra={"pattern": CLEAN_CHARACTERS, "maxLength": NOTE_MAX_CHARACTERS},
    ),
]


class AddNote(BaseModel):
    """A note for the incident's timeline (what was tried, what was learned)."""

    model_config = ConfigDict(extra="forbid")

    text: NoteText


class CreateTeam(BaseModel):
    """A new team; its creator becomes its first member."""

    model_config = ConfigDict(extra="forbid")

    name: CleanName


class AddMember(BaseModel):
    """A user joining a team."""

    model_config = ConfigDict(extra="forbid")

    user_id: UserId


class SaveProfile(BaseModel):
    """The caller's profile."""

    model_config = ConfigDict(extra="forbid")

    name: CleanName
    email: Email | None = None
