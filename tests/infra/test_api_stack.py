"""The API stack as synthesized: functions, layer, routes and authorizer, least privilege,
stage settings, secret, Cognito, alarms, dashboard, and a clean cdk-nag report."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match

from app import build
from dynashard import GrowthPolicy
from dynashard.resharding import MOVE_AFTER_SECONDS
from incidents.timeline.queries import SETTLE_SECONDS
from lambdas.routes import ROUTES, Group
from lambdas.runtime import READ_SECONDS
from lambdas.settings import PUBLIC_API_URL
from stacks.api_stack import TIMEOUT
from stacks.permissions import INDEX_READERS, TABLE_ACTIONS
from tests.helpers.synth import (
    BACKGROUND_FUNCTIONS,
    Stages,
    Synthesized,
    function_of,
    policy_statements,
    resources,
)


def test_one_function_per_group_on_python_313_arm64_with_the_layer(dev: Synthesized) -> None:
    (layer_id,) = resources(dev, "AWS::Lambda::LayerVersion")
    dev.api.has_resource_properties(
        "AWS::Lambda::LayerVersion",
        {"CompatibleRuntimes": ["python3.13"], "CompatibleArchitectures": ["arm64"]},
    )
    assert len(resources(dev, "AWS::Lambda::Function")) == len(Group) + len(BACKGROUND_FUNCTIONS)
    for group in Group:
        _, function = function_of(dev, group)
        properties = function["Properties"]
        assert properties["Runtime"] == "python3.13"
        assert properties["Architectures"] == ["arm64"]
        assert properties["TracingConfig"] == {"Mode": "Active"}
        assert properties["Layers"] == [{"Ref": layer_id}]
        assert properties["Timeout"] == 10
        assert properties["MemorySize"] >= 512
        environment = properties["Environment"]["Variables"]
        assert {
            "TABLE_NAME",
            "CURSOR_SECRET_ARN",
            "POWERTOOLS_SERVICE_NAME",
            "POWERTOOLS_METRICS_NAMESPACE",
            "SUMMARY_SHARDS",
            "STATE_SHARDS",
            "PARTICIPANT_DEFAULT_SHARDS",
            "PARTICIPANT_MAX_SHARDS",
        } <= set(environment)
        assert json.loads(environment["STATE_SHARDS"]) == {"CLOSED": 32, "OPEN": 8}
        assert "LogGroup" in properties["LoggingConfig"]
    for log_group in resources(dev, "AWS::Logs::LogGroup").values():
        assert log_group["Properties"]["RetentionInDays"] == 30


def test_every_route_has_the_request_authorizer_but_the_key_feed_and_link_routes(
    dev: Synthesized,
) -> None:
    methods = resources(dev, "AWS::ApiGateway::Method").values()
    routed = [m["Properties"] for m in methods if m["Properties"]["HttpMethod"] != "OPTIONS"]
    assert Counter(m["HttpMethod"] for m in routed) == Counter(r.method for r in ROUTES.values())
    (authorizer_id,) = resources(dev, "AWS::ApiGateway::Authorizer")
    keyed = [m for m in routed if m["AuthorizationType"] == "NONE"]
    pings = ["GET", "POST", "PUT", "PATCH"]
    feeds = ["GET"] * 2
    links = ["GET", "POST"]
    assert sorted(m["HttpMethod"] for m in keyed) == sorted(["POST"] * 3 + pings + feeds + links)
    assert [r.path for r in ROUTES.values() if r.integration_key] == [
        "/alerts",
        "/v2/enqueue",
        "/v2/change/enqueue",
        *["/heartbeats/{name}/ping"] * 4,
    ]
    assert [r.path for r in ROUTES.values() if r.feed_token] == [
        "/schedules/{schedule_id}/ical/{token}",
        "/users/{user_id}/ical/{token}",
    ]
    assert [r.path for r in ROUTES.values() if r.page_link] == ["/page-links/{token}"] * 2
    for method in routed:
        assert method["RequestValidatorId"]
        if method not in keyed:
            assert method["AuthorizationType"] == "CUSTOM"
            assert method["AuthorizerId"] == {"Ref": authorizer_id}
    dev.api.has_resource_properties(
        "AWS::ApiGateway::Authorizer",
        {
            "Type": "REQUEST",
            "IdentitySource": "method.request.header.Authorization",
            "AuthorizerResultTtlInSeconds": 60,
        },
    )
    (authorizer,) = [
        f["Properties"]
        for f in resources(dev, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] == "lambdas.authorizer.handler"
    ]
    assert set(authorizer["Environment"]["Variables"]) >= {"USER_POOL_ID", "USER_POOL_CLIENT_ID"}


def test_routes_and_integrations_follow_the_route_table(dev: Synthesized) -> None:
    paths = {
        resource["Properties"]["PathPart"]
        for resource in resources(dev, "AWS::ApiGateway::Resource").values()
    }
    expected = {part for route in ROUTES.values() for part in route.path.strip("/").split("/")}
    assert paths == {*expected, "{proxy+}"}  # the last: unknown paths' preflights
    for method in resources(dev, "AWS::ApiGateway::Method").values():
        properties = method["Properties"]
        if properties["HttpMethod"] == "OPTIONS":
            continue
        assert properties["Integration"]["Type"] == "AWS_PROXY"


@pytest.mark.parametrize("group", list(Group))
def test_each_function_gets_exactly_its_table_actions(dev: Synthesized, group: Group) -> None:
    statements = policy_statements(dev, group)
    table = [
        s
        for s in statements
        if any(str(a).startswith("dynamodb:") for a in _list(s["Action"])) and "Condition" not in s
    ]
    on_table, *on_indexes = table
    assert sorted(_list(on_table["Action"])) == sorted(TABLE_ACTIONS[group])
    assert len(_list(on_table["Resource"])) == 1
    if group in INDEX_READERS:
        (on_index,) = on_indexes
        assert _list(on_index["Action"]) == ["dynamodb:Query"]
        assert len(_list(on_index["Resource"])) == len(INDEX_READERS[group])
    else:
        assert on_indexes == []
    assert "*" not in json.dumps([s["Resource"] for s in table])
    assert not any("DescribeSecret" in json.dumps(s) for s in statements)
    wildcards = [s for s in statements if "*" in _list(s["Resource"])]
    assert all(str(a).startswith("xray:") for s in wildcards for a in _list(s["Action"]))
    secret = [s for s in statements if "secretsmanager:GetSecretValue" in _list(s["Action"])]
    assert secret
    assert all("CursorSecret" in json.dumps(s["Resource"]) for s in secret)


def test_query_functions_write_only_their_account_s_quota(dev: Synthesized) -> None:
    statements = policy_statements(dev, Group.INCIDENT_QUERIES)
    writes = [s for s in statements if "dynamodb:UpdateItem" in _list(s["Action"])]
    assert [s["Condition"] for s in writes] == [
        {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["*#ratelimit#*"]}}
    ]
    actions = {a for s in statements if s not in writes for a in _list(s["Action"])}
    dynamodb_actions = {a for a in actions if a.startswith("dynamodb:")}
    assert dynamodb_actions <= {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:BatchGetItem"}


def test_stage_throttling_access_logs_and_tracing(dev: Synthesized) -> None:
    dev.api.has_resource_properties(
        "AWS::ApiGateway::Stage",
        {
            "StageName": "dev",
            "TracingEnabled": True,
            "AccessLogSetting": Match.object_like({"DestinationArn": Match.any_value()}),
            "MethodSettings": Match.array_with(
                [
                    Match.object_like(
                        {
                            "ThrottlingRateLimit": 50,
                            "ThrottlingBurstLimit": 100,
                            "MetricsEnabled": True,
                        }
                    )
                ]
            ),
        },
    )


def test_cors_is_explicit(dev: Synthesized) -> None:
    options = [
        m["Properties"]
        for m in resources(dev, "AWS::ApiGateway::Method").values()
        if m["Properties"]["HttpMethod"] == "OPTIONS"
    ]
    assert options
    headers = options[0]["Integration"]["IntegrationResponses"][0]["ResponseParameters"]
    assert (
        headers["method.response.header.Access-Control-Allow-Origin"] == "'http://localhost:3000'"
    )
    allowed = headers["method.response.header.Access-Control-Allow-Headers"]
    assert {"Idempotency-Key", "If-Match", "If-None-Match"} <= set(allowed.strip("'").split(","))


def test_a_preflight_to_a_path_no_route_has_passes(dev: Synthesized) -> None:
    """A greedy resource whose only method is the preflight: a page then sends the request
    and reads the gateway's JSON 404 (other methods there are MISSING_AUTHENTICATION_TOKEN)."""
    paths = {
        key: r["Properties"]["PathPart"]
        for key, r in resources(dev, "AWS::ApiGateway::Resource").items()
    }
    (proxy,) = [key for key, part in paths.items() if part == "{proxy+}"]
    methods = [
        m["Properties"]["HttpMethod"]
        for m in resources(dev, "AWS::ApiGateway::Method").values()
        if m["Properties"]["ResourceId"] == {"Ref": proxy}
    ]
    assert methods == ["OPTIONS"]


def test_gateway_errors_are_json_and_readable_by_the_browser_origin(
    dev: Synthesized, synthesized: Stages
) -> None:
    """API Gateway's own 4xx/5xx (authorizer 401, validator 400, unknown route) never reach a
    function: they need the CORS header and the API's error shape in the template itself."""
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in resources(dev, "AWS::ApiGateway::GatewayResponse").values()
    }
    assert {"UNAUTHORIZED", "BAD_REQUEST_BODY", "BAD_REQUEST_PARAMETERS", "DEFAULT_4XX",
            "DEFAULT_5XX", "MISSING_AUTHENTICATION_TOKEN"} <= set(responses)  # fmt: skip
    for kind, response in responses.items():
        headers = response["ResponseParameters"]
        assert headers["gatewayresponse.header.Access-Control-Allow-Origin"] == (
            "'http://localhost:3000'"
        ), kind
        exposed = headers["gatewayresponse.header.Access-Control-Expose-Headers"]
        assert exposed == "'ETag,Location,Retry-After,RateLimit,RateLimit-Policy'", kind
        template = response["ResponseTemplates"]["application/json"]
        assert '"code": "' in template
        assert "$context.error.messageString" in template
    assert responses["UNAUTHORIZED"]["ResponseTemplates"]["application/json"].startswith(
        '{"code": "unauthorized"'
    )
    assert responses["MISSING_AUTHENTICATION_TOKEN"]["StatusCode"] == "404"
    for throttled in ("THROTTLED", "QUOTA_EXCEEDED"):
        retry = responses[throttled]["ResponseParameters"]["gatewayresponse.header.Retry-After"]
        assert retry == "'1'"
    for group in Group:
        variables = function_of(dev, group)[1]["Properties"]["Environment"]["Variables"]
        assert json.loads(variables["CORS_ALLOWED_ORIGINS"]) == ["http://localhost:3000"]
    prod = synthesized("prod")  # no browser origins configured: no CORS anywhere
    for response in prod.api.find_resources("AWS::ApiGateway::GatewayResponse").values():
        headers = response["Properties"].get("ResponseParameters", {})
        assert not [name for name in headers if "Access-Control" in name], headers
    for group in Group:
        variables = function_of(prod, group)[1]["Properties"]["Environment"]["Variables"]
        assert "CORS_ALLOWED_ORIGINS" not in variables


def test_cursor_secret_is_generated(dev: Synthesized) -> None:
    dev.api.has_resource_properties(
        "AWS::SecretsManager::Secret",
        {"GenerateSecretString": Match.object_like({"PasswordLength": 64})},
    )


def test_user_pool_ids_cannot_be_changed_by_users(dev: Synthesized) -> None:
    (pool,) = resources(dev, "AWS::Cognito::UserPool").values()
    schema = {a["Name"]: a for a in pool["Properties"]["Schema"]}
    assert schema["account_id"]["Mutable"] is False
    assert schema["user_id"]["Mutable"] is False
    assert pool["Properties"]["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    (client,) = resources(dev, "AWS::Cognito::UserPoolClient").values()
    assert not any(a.startswith("custom:") for a in client["Properties"]["WriteAttributes"])


def test_cdk_nag_report_is_clean(dev: Synthesized) -> None:
    report = json.loads((Path(dev.assembly.directory) / "validation-report.json").read_text())
    violations = [v for plugin in report["pluginReports"] for v in plugin["violations"]]
    assert violations == []


def test_cdk_nag_fails_the_synth_on_an_unaccepted_finding(tmp_path: Path) -> None:
    app = cdk.App(context={"aws:cdk:bundling-stacks": []}, outdir=str(tmp_path))
    _, api, _ = build(app)
    role = iam.Role(api, "Sloppy", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    role.add_to_policy(iam.PolicyStatement(actions=["dynamodb:*"], resources=["*"]))
    with pytest.raises(RuntimeError, match="IAM5"):
        app.synth()


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_the_events_settle_window_outlasts_any_command() -> None:
    """An oldest-first /events read stops SETTLE_SECONDS before now: every command must have
    committed by then (its function's timeout, then a request's read timeout)."""
    assert TIMEOUT.to_seconds() + READ_SECONDS < SETTLE_SECONDS


API_GATEWAY_SECONDS = 29
"""API Gateway's default integration timeout: no request to a function outlives it."""


def test_no_function_acts_on_a_shard_map_once_a_halving_may_move_its_items() -> None:
    """A halving's mover waits MOVE_AFTER_SECONDS: a map cached by a function and used
    until its request ends (the function's timeout, then API Gateway's 29 s bound) must
    have lapsed by then, or a list would trust cursor positions items moved behind."""
    cached = GrowthPolicy().cache_seconds
    assert cached + max(TIMEOUT.to_seconds(), API_GATEWAY_SECONDS) < MOVE_AFTER_SECONDS


def test_pages_links_point_below_the_stages_api(dev: Synthesized) -> None:
    """The sender makes each page's link below the URL the stage's API is called at."""
    _, sender = function_of(dev, "lambdas.sender.handler")
    variables = sender["Properties"]["Environment"]["Variables"]
    (api_url,) = [
        output["Value"]
        for name, output in dev.api.to_json()["Outputs"].items()
        if name.startswith("ApiUrl")
    ]
    stages = resources(dev, "AWS::ApiGateway::Stage")
    assert _rendered(variables[PUBLIC_API_URL], stages) == _rendered(api_url, stages)
    assert _rendered(api_url, stages).endswith(".execute-api.<AWS::Region>.<AWS::URLSuffix>/dev/")


def _rendered(url: Mapping[str, Any], stages: Mapping[str, Any]) -> str:
    """A URL's ``Fn::Join`` as text: a stage's reference as its name, others as ``<Ref>``."""
    separator, parts = url["Fn::Join"]
    return str(separator).join(
        part if isinstance(part, str)
        else str(stages[part["Ref"]]["Properties"]["StageName"]) if part["Ref"] in stages
        else f"<{part['Ref']}>"
        for part in parts
    )  # fmt: skip
