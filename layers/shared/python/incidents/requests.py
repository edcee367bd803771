"""Request bodies of the commands, validated by pydantic (and documented in OpenAPI)."""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from incidents.models import Id, Name, Role, Severity, Status, Title

MAX_LIST = 100


def _check_prefix(ids: list[str], prefix: str, field: str) -> None:
    wrong = [i for i in ids if not i.startswith(prefix)]
    if wrong:
        raise ValueError(f"{field} must be {prefix}... ids, got {wrong[:3]}")


class CreateIncident(BaseModel):
    """A new incident; the caller becomes its creator participant."""

    model_config = ConfigDict(extra="forbid")

    title: Title
    severity: Severity = Severity.SEV3
    status: Status = Status.TRIGGERED
    details: dict[str, Any] = Field(default_factory=dict)
    assignees: list[Id] = Field(default_factory=list, max_length=MAX_LIST)
    teams: list[Id] = Field(default_factory=list, max_length=MAX_LIST)

    @model_validator(mode="after")
    def _ids_have_their_kind(self) -> Self:
        _check_prefix(self.assignees, "user_", "assignees")
        _check_prefix(self.teams, "team_", "teams")
        return self


class UpdateIncident(BaseModel):
    """Fields to change; at least one."""

    model_config = ConfigDict(extra="forbid")

    title: Title | None = None
    status: Status | None = None
    severity: Severity | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if self.title is None and self.status is None and self.severity is None:
            raise ValueError("give at least one of title, status, severity")
        return self


class AddParticipant(BaseModel):
    """A user (assignee or responder) or a team (role ``team``) joining an incident."""

    model_config = ConfigDict(extra="forbid")

    participant_id: Id
    role: Role

    @model_validator(mode="after")
    def _role_fits_kind(self) -> Self:
        is_team = self.participant_id.startswith("team_")
        if self.role is Role.CREATOR:
            raise ValueError("the creator role is given at creation only")
        if is_team != (self.role is Role.TEAM):
            raise ValueError("teams join with role 'team'; users as 'assignee' or 'responder'")
        if not is_team and not self.participant_id.startswith("user_"):
            raise ValueError("participant_id must be a user_... or team_... id")
        return self


class CreateTeam(BaseModel):
    """A new team; its creator becomes its first member."""

    model_config = ConfigDict(extra="forbid")

    name: Name


class AddMember(BaseModel):
    """A user joining a team."""

    model_config = ConfigDict(extra="forbid")

    user_id: Id

    @model_validator(mode="after")
    def _is_user(self) -> Self:
        _check_prefix([self.user_id], "user_", "user_id")
        return self


class SaveProfile(BaseModel):
    """The caller's profile."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    email: Annotated[str, Field(max_length=254, pattern=r"^[^@\s]+@[^@\s]+$")] | None = None
