"""SnapStart where decision 020 puts it: prod's API handlers and authorizer start from a
snapshot of their published version, and API Gateway invokes that version through each
function's ``live`` alias; dev, and every background function, start as before."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from lambdas.routes import Group
from stacks.config import stage_config
from stacks.functions import LIVE_ALIAS
from tests.helpers.synth import BACKGROUND_FUNCTIONS, Stages, Synthesized, resources

SNAPSHOTTED = {group.handler for group in Group} | {"lambdas.authorizer.handler"}
"""The functions a person's request waits on when they start cold."""
ON_PUBLISHED_VERSIONS = {"ApplyOn": "PublishedVersions"}


@pytest.fixture(scope="module")
def prod(synthesized: Stages) -> Synthesized:
    return synthesized("prod")


def snap_starts(synth: Synthesized) -> dict[str, Any]:
    """Each of our functions' handler and its SnapStart setting (None: none)."""
    return {
        function["Properties"]["Handler"]: function["Properties"].get("SnapStart")
        for function in resources(synth, "AWS::Lambda::Function").values()
        if function["Properties"].get("Handler", "").startswith("lambdas.")
    }


def live_aliases(synth: Synthesized) -> dict[str, str]:
    """Each ``live`` alias's logical id and its function's handler, after checking that it
    points at the function's current version."""
    functions = resources(synth, "AWS::Lambda::Function")
    versions = resources(synth, "AWS::Lambda::Version")
    found = {}
    for logical, alias in resources(synth, "AWS::Lambda::Alias").items():
        properties = alias["Properties"]
        assert properties["Name"] == LIVE_ALIAS
        function = properties["FunctionName"]["Ref"]
        version, attribute = properties["FunctionVersion"]["Fn::GetAtt"]
        assert attribute == "Version"
        assert versions[version]["Properties"]["FunctionName"] == {"Ref": function}
        found[logical] = functions[function]["Properties"]["Handler"]
    return found


def invoked(uri: Mapping[str, Any]) -> Any:
    """The function reference in an API Gateway ``.../functions/<arn>/invocations`` URI."""
    parts = uri["Fn::Join"][1]
    return parts[parts.index(":lambda:path/2015-03-31/functions/") + 1]


def test_prod_snapshots_the_api_s_handlers_and_authorizer_and_nothing_else(
    prod: Synthesized,
) -> None:
    settings = snap_starts(prod)
    assert {h for h, snap in settings.items() if snap == ON_PUBLISHED_VERSIONS} == SNAPSHOTTED
    background = {h for h in settings if h.split(".")[1] in BACKGROUND_FUNCTIONS}
    assert background - SNAPSHOTTED, "the background functions are there"
    assert all(settings[h] is None for h in background - SNAPSHOTTED)


def test_dev_starts_every_function_as_before(dev: Synthesized) -> None:
    assert set(snap_starts(dev).values()) == {None}
    assert resources(dev, "AWS::Lambda::Alias") == {}
    assert resources(dev, "AWS::Lambda::Version") == {}


def test_each_snapshotted_function_has_one_live_alias_and_its_replaced_versions_go(
    prod: Synthesized,
) -> None:
    """A retained version keeps its snapshot cached, and charged, until Lambda drops it."""
    assert sorted(live_aliases(prod).values()) == sorted(SNAPSHOTTED)
    versions = resources(prod, "AWS::Lambda::Version").values()
    assert len(versions) == len(SNAPSHOTTED)
    assert {(v["DeletionPolicy"], v["UpdateReplacePolicy"]) for v in versions} == {
        ("Delete", "Delete")
    }


def test_api_gateway_invokes_the_live_aliases_and_may_invoke_only_them(
    prod: Synthesized,
) -> None:
    """$LATEST is never snapshotted: a route or the authorizer invoking it would start
    cold, and a permission on it would let API Gateway do so."""
    aliases = live_aliases(prod)
    methods = resources(prod, "AWS::ApiGateway::Method").values()
    integrations = [m["Properties"]["Integration"] for m in methods]
    proxied = [i for i in integrations if i.get("Type") == "AWS_PROXY"]
    assert proxied
    routed = {aliases[invoked(i["Uri"])["Ref"]] for i in proxied}
    assert routed == {group.handler for group in Group}
    (authorizer,) = resources(prod, "AWS::ApiGateway::Authorizer").values()
    assert aliases[invoked(authorizer["Properties"]["AuthorizerUri"])["Ref"]] == (
        "lambdas.authorizer.handler"
    )
    permissions = [
        p["Properties"]
        for p in resources(prod, "AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "apigateway.amazonaws.com"
    ]
    assert permissions
    assert {aliases[p["FunctionName"]["Ref"]] for p in permissions} == SNAPSHOTTED


def test_snap_start_is_a_yes_or_no() -> None:
    with pytest.raises(ValueError, match=r"stages\.odd\.snapStart must be true or false"):
        stage_config("odd", {"odd": {"snapStart": "yes"}})
    assert stage_config("dev", {}).snap_start is False
