"""Request bodies of the commands, validated by pydantic (and documented in OpenAPI)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Any, Literal, Self

from email_validator import EmailNotValidError, validate_email
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    StringConstraints,
    model_validator,
)

from incidents.models import (
    EMAIL_MAX,
    NAME_MAX,
    NOTE_MAX_CHARACTERS,
    TEAM_ID,
    TITLE_MAX,
    USER_ID,
    ParticipantId,
    Role,
    Severity,
    Status,
    TeamId,
    TimeZoneName,
    UserId,
    UserRole,
)
from incidents.text import CLEAN_CHARACTERS, REFUSED_CLASS, TEXT_RULES, clean_text

MAX_LIST = 100


def _json_integer(value: object) -> object:
    """A JSON integer as JSON Schema counts one: ``300`` and ``300.0`` (or ``3e2``, or a whole
    ``Decimal`` read back from the table) are the integer 300; ``"300"`` and ``true`` are
    not numbers, and ``300.5`` not whole (refused next, by the strict integer)."""
    if isinstance(value, bool | str):
        raise ValueError("must be a JSON integer, not a string or a boolean")
    if isinstance(value, float | Decimal) and value == int(value):
        return int(value)
    return value


AS_JSON_INTEGER = BeforeValidator(_json_integer)
"""Put after a field's bounds (``Annotated[StrictInt, Field(ge=..), AS_JSON_INTEGER]``):
before them, the document would print the bounds under pydantic's names, not as
``minimum`` and ``maximum``."""
JsonInteger = Annotated[StrictInt, AS_JSON_INTEGER]
"""An integer field of a body: what the document's ``"type": "integer"`` admits, no more."""


def never_null(*names: str, at_least_one: bool = False) -> Callable[[dict[str, Any]], None]:
    """The document says what the validator checks: `names` (every field, when none is
    named), if sent, are not null; with `at_least_one`, a body names a field at least."""

    def edit(schema: dict[str, Any]) -> None:
        for name in names or list(schema["properties"]):
            field = schema["properties"][name]
            field.pop("default", None)
            field.update(next(c for c in field.pop("anyOf") if c.get("type") != "null"))
        if at_least_one:
            schema["minProperties"] = 1

    return edit


def stored_text(max_characters: int, max_bytes: int | None = None) -> AfterValidator:
    """Text as it is stored (`clean_text`: NFC, nothing refused, something visible), then
    its limits counted on that: some characters grow under NFC (U+FB2C is three code
    points), so a limit checked before would let them through to a 500."""

    def check(value: str) -> str:
        text = clean_text(value).strip()
        size = len(text.encode())
        if len(text) > max_characters or (max_bytes is not None and size > max_bytes):
            limit = f"{max_characters:,}" + (f" ({max_bytes:,} bytes)" if max_bytes else "")
            raise ValueError(
                f"is {len(text):,} characters ({size:,} bytes of UTF-8) once normalized to "
                f"NFC; at most {limit}"
            )
        return text

    return AfterValidator(check)


def valid_email(value: str) -> str:
    """An address email-validator accepts (syntax only: no DNS lookup), as it normalizes
    it: a domain needs a dot, and nothing invisible hides in either part."""
    try:
        return validate_email(value, check_deliverability=False).normalized
    except EmailNotValidError as error:
        raise ValueError(str(error)) from None


def documented(max_characters: int, rules: str = "", pattern: str = CLEAN_CHARACTERS) -> Any:
    """The rules in the document: the characters as a pattern, the limit as ``maxLength``,
    the rest in words (a schema cannot say "something visible"; `clean_text` enforces all
    of it)."""
    words = rules or f"{TEXT_RULES} At most {max_characters:,} characters, counted in NFC."
    schema: dict[str, Any] = {"pattern": pattern, "maxLength": max_characters}
    return Field(description=words, json_schema_extra=schema)


OneLine = StringConstraints(strip_whitespace=True, min_length=1)
CleanTitle = Annotated[str, OneLine, stored_text(TITLE_MAX), documented(TITLE_MAX)]
CleanName = Annotated[str, OneLine, stored_text(NAME_MAX), documented(NAME_MAX)]
EMAIL = f"^[^@\\s{REFUSED_CLASS}]+@[^@\\s{REFUSED_CLASS}]+$"
Email = Annotated[
    str,
    Field(
        pattern=EMAIL,
        description=f"An email address (checked by email-validator, normalized). {TEXT_RULES}",
        json_schema_extra={"maxLength": EMAIL_MAX, "format": "email"},
    ),
    stored_text(EMAIL_MAX),
    AfterValidator(valid_email),
]


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


class FieldChanges(BaseModel):
    """A body of fields to change: at least one (an empty object is a 400), none null."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_changes_only)

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if not self.model_fields_set:
            raise ValueError(f"give at least one of {', '.join(type(self).model_fields)}")
        nulls = sorted(name for name in self.model_fields_set if getattr(self, name) is None)
        if nulls:
            raise ValueError(f"{', '.join(nulls)} cannot be null")
        return self


class UpdateIncident(FieldChanges):
    """Fields to change: at least one (an empty object is a 400), none null."""

    title: CleanTitle | None = None
    status: Status | None = None
    severity: Severity | None = None


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


NOTE_MAX_BYTES = 2000
NoteText = Annotated[
    str,
    StringConstraints(min_length=1),
    stored_text(NOTE_MAX_CHARACTERS, NOTE_MAX_BYTES),
    documented(
        NOTE_MAX_CHARACTERS,
        f"{TEXT_RULES} At most {NOTE_MAX_CHARACTERS:,} characters and {NOTE_MAX_BYTES:,} "
        "bytes of UTF-8, counted in NFC (what is stored), so that a note event stays one "
        "write unit.",
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


class UserPatch(FieldChanges):
    """A user's fields to change: at least one (an empty object is a 400), none null."""

    name: CleanName | None = None
    time_zone: TimeZoneName | None = None
    role: UserRole | None = None
