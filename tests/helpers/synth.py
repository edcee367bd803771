"""The app synthesized as ``cdk synth`` would (cdk.json's context, cdk-nag on), minus asset
bundling: each stage once per test process (`synthesized`), and the templates' lookups."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from app import build
from lambdas.routes import Group

CDK_JSON = Path(__file__).resolve().parents[2] / "cdk.json"
BACKGROUND_FUNCTIONS = (
    "authorizer",
    "publisher",
    "sender",
    "stream_recovery",
    "shard_mover",
    "sweeper",
)
"""Functions beside one per API handler group: the API's authorizer, events out's and the
shard mover."""


@dataclass(frozen=True)
class Synthesized:
    """The stacks of one stage and their templates."""

    data: Template
    api: Template
    account: Template
    assembly: cdk.cx_api.CloudAssembly


def synthesize(
    stage: str, outdir: Path, extra_stages: dict[str, dict[str, object]] | None = None
) -> Synthesized:
    """The app of `stage` (cdk.json's stages plus `extra_stages`), synthesized with cdk-nag
    and without bundling assets."""
    context = json.loads(CDK_JSON.read_text())["context"]
    context["stages"] = {**context["stages"], **(extra_stages or {})}
    app = cdk.App(
        context={**context, "stage": stage, "aws:cdk:bundling-stacks": []}, outdir=str(outdir)
    )
    data, api, account = build(app)
    assembly = app.synth()
    templates = [Template.from_stack(stack) for stack in (data, api, account)]
    return Synthesized(templates[0], templates[1], templates[2], assembly)


def resources(synth: Synthesized, kind: str) -> Mapping[str, Any]:
    return synth.api.find_resources(kind)


def function_of(synth: Synthesized, group: Group | str) -> tuple[str, Mapping[str, Any]]:
    """The function of an API handler group, or of a handler string."""
    handler = group.handler if isinstance(group, Group) else group
    (found,) = [
        (logical, resource)
        for logical, resource in resources(synth, "AWS::Lambda::Function").items()
        if resource["Properties"]["Handler"] == handler
    ]
    return found


def dashboard_body(synth: Synthesized) -> dict[str, Any]:
    """The dashboard's body as CloudWatch reads it: the ``Fn::Join`` of its template rendered
    (its literal parts joined, each ``Ref`` or ``Fn::GetAtt`` in it as ``<Ref name>``)."""
    (dashboard,) = resources(synth, "AWS::CloudWatch::Dashboard").values()
    separator, parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"]
    body: dict[str, Any] = json.loads(separator.join(map(_placeholder, parts)))
    return body


def _placeholder(part: str | Mapping[str, Any]) -> str:
    """A literal part as it is; a reference as a placeholder naming it (no quotes: it sits
    inside a JSON string)."""
    if isinstance(part, str):
        return part
    ((kind, target),) = part.items()
    name = ".".join(target) if isinstance(target, list) else str(target)
    return f"<{kind} {name}>"


def policy_statements(synth: Synthesized, group: Group | str) -> list[dict[str, Any]]:
    """The statements of the policy on the function role of `group` (or a handler)."""
    _, function = function_of(synth, group)
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    (policy,) = [
        p
        for p in resources(synth, "AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
    ]
    statements: list[dict[str, Any]] = policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


class Stages:
    """Synthesized stages, each built once (a synth with cdk-nag takes seconds): tests only
    read the templates."""

    def __init__(self, outdirs: pytest.TempPathFactory) -> None:
        self._outdirs = outdirs
        self._built: dict[str, Synthesized] = {}

    def __call__(
        self, stage: str, extra_stages: dict[str, dict[str, object]] | None = None
    ) -> Synthesized:
        """`stage` of cdk.json's stages plus `extra_stages`, synthesized on first use."""
        key = json.dumps([stage, extra_stages], sort_keys=True)
        if key not in self._built:
            outdir = self._outdirs.mktemp(f"cdk-{stage}")
            self._built[key] = synthesize(stage, outdir, extra_stages)
        return self._built[key]
