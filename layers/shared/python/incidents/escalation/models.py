"""Escalation policies as the API reads and writes them, in PagerDuty's names: levels
(``escalation_rules``), each paging its targets after the level before waited its delay,
the whole policy repeated ``num_loops`` times.

Targets take PagerDuty's ``user_reference`` and ``schedule_reference`` or the short
``user`` and ``schedule``, and are answered in PagerDuty's form.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, model_validator

from incidents.models import (
    ESCALATION_POLICY_ID,
    RESPONSE,
    SCHEDULE_ID,
    USER_ID,
    Page,
    TeamId,
    Timestamp,
)
from incidents.requests import AS_JSON_INTEGER, CleanName, CleanTitle

MAX_RULES = 10
"""Levels of one policy."""
MAX_TARGETS = 10
"""Users and schedules one level pages."""
MAX_TEAMS = 10
MAX_LOOPS = 9
"""PagerDuty's highest ``num_loops``."""
MAX_DELAY_MINUTES = 1440
"""A level waits at most a day before the next."""

EscalationPolicyId = Annotated[str, Field(pattern=ESCALATION_POLICY_ID)]


class TargetType(StrEnum):
    """What a level pages: a user, or whoever a schedule has on call then."""

    USER = "user_reference"
    SCHEDULE = "schedule_reference"


def _short_form(value: object) -> object:
    """``user`` and ``schedule`` read as PagerDuty's ``user_reference`` and
    ``schedule_reference``."""
    return {"user": TargetType.USER, "schedule": TargetType.SCHEDULE}.get(str(value), value)


class Target(BaseModel):
    """A user or a schedule, by id (the id's prefix must match the type)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Annotated[TargetType, BeforeValidator(_short_form)]
    id: Annotated[str, Field(pattern=f"({USER_ID})|({SCHEDULE_ID})")]

    @model_validator(mode="after")
    def _matching(self) -> Target:
        """A user reference names a user, a schedule reference a schedule."""
        wanted = "user_" if self.type is TargetType.USER else "sched_"
        if not self.id.startswith(wanted):
            raise ValueError(f"a {self.type.value} names an id starting {wanted}")
        return self


class AssignmentStrategy(StrEnum):
    """How a level's targets share an incident (PagerDuty's)."""

    ASSIGN_TO_EVERYONE = "assign_to_everyone"
    ROUND_ROBIN = "round_robin"
    """One target a level, the next one for the next incident."""


class EscalationRuleRequest(BaseModel):
    """One level: its targets, and how long it waits for an acknowledgement before the
    next level is paged."""

    model_config = ConfigDict(extra="forbid")

    escalation_delay_in_minutes: Annotated[
        StrictInt, Field(ge=1, le=MAX_DELAY_MINUTES), AS_JSON_INTEGER
    ]
    targets: Annotated[list[Target], Field(min_length=1, max_length=MAX_TARGETS)]
    escalation_rule_assignment_strategy: AssignmentStrategy = AssignmentStrategy.ASSIGN_TO_EVERYONE


class EscalationPolicyRequest(BaseModel):
    """A whole policy (a create, or a replace by ``PUT``)."""

    model_config = ConfigDict(extra="forbid")

    name: CleanName
    description: CleanTitle | None = None
    num_loops: Annotated[StrictInt, Field(ge=0, le=MAX_LOOPS), AS_JSON_INTEGER] = 0
    """Times the whole policy is paged again after its last level (0: once)."""
    escalation_rules: Annotated[
        list[EscalationRuleRequest], Field(min_length=1, max_length=MAX_RULES)
    ]
    team_ids: Annotated[list[TeamId], Field(max_length=MAX_TEAMS)] = []


class EscalationRule(BaseModel):
    """A level as stored and shown, with its id (read back leniently: the table's numbers
    are decimals)."""

    model_config = RESPONSE

    id: str
    escalation_delay_in_minutes: int
    targets: list[Target]
    escalation_rule_assignment_strategy: AssignmentStrategy


class EscalationPolicy(BaseModel):
    """A policy as the API shows it; ``version`` moves with each change, and an incident
    escalates by the version it started with."""

    model_config = RESPONSE

    id: str
    type: Literal["escalation_policy"] = "escalation_policy"
    name: str
    description: str | None
    num_loops: int
    escalation_rules: list[EscalationRule]
    team_ids: list[str]
    version: int
    created_at: Timestamp
    updated_at: Timestamp


class EscalationPolicyList(Page[EscalationPolicy]):
    """One page of the account's escalation policies, by id."""


class EscalateIncident(BaseModel):
    """An escalation by hand to a level of the policy the incident keeps (PagerDuty's
    ``escalation_level``)."""

    model_config = ConfigDict(extra="forbid")

    escalation_level: Annotated[StrictInt, Field(ge=1, le=MAX_RULES), AS_JSON_INTEGER]


class ReassignIncident(BaseModel):
    """The incident given to another escalation policy, from its level 1."""

    model_config = ConfigDict(extra="forbid")

    escalation_policy_id: Annotated[str, Field(pattern=ESCALATION_POLICY_ID)]
