"""Request bodies of the commands, validated by pydantic (and documented in OpenAPI)."""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from incidents.models import (
    Name,
    ParticipantId,
    Role,
    Severity,
    Status,
    TeamId,
    Title,
    UserId,
)

MAX_LIST = 100


class CreateIncident(BaseModel):
    """A new incident; the caller becomes its creator participant."""

    model_config = ConfigDict(extra="forbid")

    title: Title
    severity: Severity = Severity.SEV3
    status: Status = Status.TRIGGERED
    details: dict[str, Any] = Field(default_factory=dict)
    assignees: list[UserId] = Field(default_factory=list, max_length=MAX_LIST)
    teams: list[TeamId] = Field(default_factory=list, max_length=MAX_LIST)


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

    participant_id: ParticipantId
    role: Role

    @model_validator(mode="after")
    def _role_fits_kind(self) -> Self:
        is_team = self.participant_id.startswith("team_")
        if self.role is Role.CREATOR:
            raise ValueError("the creator role is given at creation only")
        if is_team != (self.role is Role.TEAM):
            raise ValueError("teams join with role 'team'; users as 'assignee' or 'responder'")
        return self


class CreateTeam(BaseModel):
    """A new team; its creator becomes its first member."""

    model_config = ConfigDict(extra="forbid")

    name: Name


class AddMember(BaseModel):
    """A user joining a team."""

    model_config = ConfigDict(extra="forbid")

    user_id: UserId


class SaveProfile(BaseModel):
    """The caller's profile."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    email: Annotated[str, Field(max_length=254, pattern=r"^[^@\s]+@[^@\s]+$")] | None = None
