"""The app synthesized as ``cdk synth`` would (cdk.json's context, cdk-nag on), minus asset
bundling: each stage once per test process (`synthesized`), and the templates' lookups.

The API stack's nested stacks (its routes by subject, events out, monitoring...) are read
as one template (`flattened`): each nested stack's resources in place of the stack resource,
its parameters replaced by what the parent passes, so a test reads a route's method or a
function's policy wherever the split put it."""

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
    "timer_worker",
    "receipts",
)
"""Functions beside one per API handler group: the API's authorizer, events out's (and
the providers' receipts), the shard mover and the timers' sweep and workers."""


@dataclass(frozen=True)
class Synthesized:
    """The stacks of one stage and their templates."""

    data: Template
    api: Template
    """The API stack with its nested stacks flattened into it."""
    account: Template
    assembly: cdk.cx_api.CloudAssembly
    stacks: Mapping[str, int]
    """Each synthesized template (nested ones included, by construct path) and its count of
    resources, the figure CloudFormation limits per stack."""


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
    counts = {
        stack.node.path: len(Template.from_stack(stack).to_json()["Resources"])
        for stack in (data, account, api, *nested_stacks(api))
    }
    return Synthesized(
        Template.from_stack(data),
        Template.from_json(flattened(api)),
        Template.from_stack(account),
        assembly,
        counts,
    )


def nested_stacks(stack: cdk.Stack) -> list[cdk.NestedStack]:
    """The nested stacks whose parent is `stack`."""
    return [
        child
        for child in stack.node.find_all()
        if isinstance(child, cdk.NestedStack) and child.nested_stack_parent is stack
    ]


def renamed(template: dict[str, Any], prefix: str) -> dict[str, Any]:
    """`template` with each resource's logical id prefixed (as CDK prefixes a construct's
    children) and every reference to it following."""
    names = {name: f"{prefix}{name}" for name in template["Resources"]}

    def rename(value: Any) -> Any:
        if isinstance(value, list):
            return [rename(v) for v in value]
        if not isinstance(value, dict):
            return value
        if set(value) == {"Ref"}:
            return {"Ref": names.get(value["Ref"], value["Ref"])}
        if set(value) == {"Fn::GetAtt"}:
            target, *attribute = value["Fn::GetAtt"]
            return {"Fn::GetAtt": [names.get(target, target), *attribute]}
        return {k: rename(v) for k, v in value.items()}

    def resource(value: dict[str, Any]) -> dict[str, Any]:
        depends = value.get("DependsOn", [])
        depends = [names[depends]] if isinstance(depends, str) else [names[d] for d in depends]
        return {**rename(value), **({"DependsOn": depends} if depends else {})}

    return {
        **template,
        "Resources": {names[n]: resource(r) for n, r in template["Resources"].items()},
        "Outputs": rename(template.get("Outputs", {})),
    }


def flattened(stack: cdk.Stack) -> dict[str, Any]:
    """`stack`'s template with each nested stack's resources in place of its stack resource
    and its parameters and outputs resolved to the parent's expressions."""
    template = dict(Template.from_stack(stack).to_json())
    resources = template["Resources"]
    nested: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for child in nested_stacks(stack):
        logical = stack.resolve(child.nested_stack_resource.logical_id)  # type: ignore[union-attr]
        inner = renamed(flattened(child), child.node.id)
        nested[logical] = (inner, resources.pop(logical)["Properties"].get("Parameters", {}))

    def resolve(value: Any, parameters: Mapping[str, Any]) -> Any:
        if isinstance(value, list):
            return [resolve(v, parameters) for v in value]
        if not isinstance(value, dict):
            return value
        if set(value) == {"Ref"} and value["Ref"] in parameters:
            return resolve(parameters[value["Ref"]], {})
        if set(value) == {"Fn::GetAtt"} and value["Fn::GetAtt"][0] in nested:
            target, attribute = value["Fn::GetAtt"]
            inner, passed = nested[target]
            output = attribute.removeprefix("Outputs.")
            return resolve(inner["Outputs"][output]["Value"], passed)
        return {k: resolve(v, parameters) for k, v in value.items()}

    for inner, passed in nested.values():
        for name, resource in inner["Resources"].items():
            assert name not in resources, f"{name} is in two templates"
            resources[name] = resolve(resource, passed)
    template["Resources"] = {name: resolve(r, {}) for name, r in resources.items()}
    return template


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
