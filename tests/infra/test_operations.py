"""Operations: alarms reach a person (and say when it is over), the alarms that matter
exist, nothing account-wide goes with a stage, sign-in is as narrow as the documented flows,
and prod keeps its logs and caps its cost."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from incidents.events_out.delivery_messages import SENDER_MAX_CONCURRENCY
from incidents.notifications.receipts import SOURCES
from incidents.table import TABLE_SCHEMA
from lambdas.routes import Group
from lambdas.settings import mover_write_units
from stacks.config import DEFAULT_TIMER_WORKERS, SUPPORT_FUNCTIONS, stage_config
from stacks.monitoring import LISTS
from tests.helpers.synth import (
    BACKGROUND_FUNCTIONS,
    Stages,
    Synthesized,
    dashboard_body,
    function_of,
    policy_statements,
    resources,
)

PAGER = "https://events.example-pager.com/integration/abc"
PHONE = "arn:aws:sms-voice:eu-west-1:123456789012:phone-number/phone-0123456789abcdef"
SENDER = "lambdas.sender.handler"
OPS_STAGE: dict[str, dict[str, object]] = {
    "ops": {
        "removalPolicy": "destroy",
        "alarmEmails": ["oncall@example.com", "lead@example.com"],
        "alarmHttpsEndpoint": PAGER,
        "signInCallbackUrls": ["https://app.example.com/callback"],
        "signInLogoutUrls": ["https://app.example.com/"],
        "pageEmailDomain": "pages.example.com",
        "pagePhoneNumber": PHONE,
        "smsSpendCapPerAccount": 20,
    }
}


@pytest.fixture(scope="module")
def ops(synthesized: Stages) -> Synthesized:
    return synthesized("ops", OPS_STAGE)


@pytest.fixture(scope="module")
def prod(synthesized: Stages) -> Synthesized:
    return synthesized("prod")


def alarms(synth: Synthesized) -> list[dict[str, Any]]:
    return [a["Properties"] for a in resources(synth, "AWS::CloudWatch::Alarm").values()]


def alarm(synth: Synthesized, name: str) -> dict[str, Any]:
    (found,) = [a for a in alarms(synth) if a["AlarmDescription"].startswith(f"{name}:")]
    return found


def test_cloudwatch_may_use_the_alarm_topics_key(dev: Synthesized) -> None:
    """An AWS-managed key (alias/aws/sns) does not let CloudWatch publish: alarms are lost."""
    (topic,) = resources(dev, "AWS::SNS::Topic").values()
    key_ref = topic["Properties"]["KmsMasterKeyId"]
    assert isinstance(key_ref, dict), f"an AWS-managed key: {key_ref}"
    key = resources(dev, "AWS::KMS::Key")[key_ref["Fn::GetAtt"][0]]["Properties"]
    assert key["EnableKeyRotation"] is True
    statements = key["KeyPolicy"]["Statement"]
    (cloudwatch,) = [
        s for s in statements if s["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    ]
    assert cloudwatch["Effect"] == "Allow"
    assert set(cloudwatch["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}


def test_every_alarm_notifies_the_topic_on_alarm_and_on_ok(dev: Synthesized) -> None:
    (topic_id,) = resources(dev, "AWS::SNS::Topic")
    for found in alarms(dev):
        assert found["AlarmActions"] == [{"Ref": topic_id}], found["AlarmDescription"]
        assert found["OKActions"] == [{"Ref": topic_id}], found["AlarmDescription"]


def test_subscribers_come_from_the_stage_config(dev: Synthesized, ops: Synthesized) -> None:
    assert resources(dev, "AWS::SNS::Subscription") == {}
    subscriptions = Counter(
        (s["Properties"]["Protocol"], s["Properties"]["Endpoint"])
        for s in resources(ops, "AWS::SNS::Subscription").values()
    )
    assert subscriptions == Counter(
        {("email", "oncall@example.com"): 1, ("email", "lead@example.com"): 1, ("https", PAGER): 1}
    )


@pytest.mark.parametrize(
    ("setting", "value", "says"),
    [
        ("alarmEmails", ["not-an-address"], "alarmEmails"),
        ("alarmHttpsEndpoint", "http://pager.example.com", "https://"),
        ("signInCallbackUrls", ["http://app.example.com/cb"], "https://"),
        ("reservedConcurrency", {"incident_queries": 0}, "positive integer"),
        ("reservedConcurrency", {"queries": 5}, "unknown functions"),
        ("reservedConcurrency", {"teams": 950}, "100 of the account's"),
        ("reservedConcurrency", {"sender": 5}, "sender must be at least 20"),
        ("reservedConcurrency", {"timer_worker": 2}, "timer_worker must be at least 8"),
        ("tableMaxReadRequestUnits", -1, "positive integer"),
        ("shardMoverWriteUnits", 0, "positive integer"),
        ("alertsPerMinute", 0, "positive integer"),
        ("apiRequestsPerMinute", 0, "positive integer"),
        ("integrationAlertsPerMinute", -5, "positive integer"),
        ("apiKeyQuotaPercent", 0, "positive integer"),
        ("apiKeyQuotaPercent", 101, "at most 100"),
        ("pageEmailDomain", "Pages.Example.com", "not a domain"),
        ("pageEmailDomain", "localhost", "not a domain"),
        ("pagePhoneNumber", "+14155552671", "not the ARN"),
        ("smsSpendCapPerAccount", 0, "positive integer"),
        ("voiceSpendCapPerAccount", 2.5, "positive integer"),
        ("pagePhoneNumber", PHONE.replace("phone-number", "sender-id"), "not the ARN"),
    ],
)
def test_bad_operations_settings_are_refused(setting: str, value: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        stage_config("x", {"x": {setting: value}})


def test_pages_are_emailed_through_the_stages_own_identity_alone(
    ops: Synthesized, dev: Synthesized
) -> None:
    (identity,) = resources(ops, "AWS::SES::EmailIdentity").values()
    assert identity["Properties"]["EmailIdentity"] == "pages.example.com"
    (configuration_set,) = resources(ops, "AWS::SES::ConfigurationSet")
    assert identity["Properties"]["ConfigurationSetAttributes"]["ConfigurationSetName"] == {
        "Ref": configuration_set
    }
    (sending,) = [s for s in policy_statements(ops, SENDER) if "ses:" in json.dumps(s["Action"])]
    assert sending["Action"] == "ses:SendEmail"
    assert len(sending["Resource"]) == 2, "the identity and the configuration set, nothing else"
    assert "*" not in json.dumps(sending["Resource"])
    environment = function_of(ops, SENDER)[1]["Properties"]["Environment"]["Variables"]
    assert environment["PAGE_EMAIL_SENDER"] == "pages@pages.example.com"
    assert not resources(dev, "AWS::SES::EmailIdentity"), "no domain: no identity"
    dev_sender = json.dumps(policy_statements(dev, SENDER))
    assert "ses:" not in dev_sender


def test_pages_are_texted_and_called_from_the_stage_s_number_alone(
    ops: Synthesized, dev: Synthesized
) -> None:
    (configuration_set,) = resources(ops, "AWS::SMSVOICE::ConfigurationSet")
    (sending,) = [s for s in policy_statements(ops, SENDER) if "sms-voice:" in json.dumps(s)]
    assert sorted(sending["Action"]) == ["sms-voice:SendTextMessage", "sms-voice:SendVoiceMessage"]
    assert sending["Resource"] == [PHONE, {"Fn::GetAtt": [configuration_set, "Arn"]}]
    environment = function_of(ops, SENDER)[1]["Properties"]["Environment"]["Variables"]
    assert environment["PAGE_ORIGINATION_IDENTITY"] == PHONE
    assert environment["PAGE_SMS_CONFIGURATION_SET"] == {"Ref": configuration_set}
    caps = (environment["PAGE_SMS_SPEND_CAP_USD"], environment["PAGE_VOICE_SPEND_CAP_USD"])
    assert caps == ("20", "50"), "the stage's, and the default"
    assert not resources(dev, "AWS::SMSVOICE::ConfigurationSet"), "no number: nothing"
    assert "sms-voice:" not in json.dumps(policy_statements(dev, SENDER))


def test_a_person_not_reached_alarms(dev: Synthesized) -> None:
    for name in ("NotificationsFailed", "CodesFailed", "PagesUndecidable"):
        watched = alarm(dev, name)
        assert (watched["MetricName"], watched["Threshold"]) == (name, 1)


def test_the_alarms_that_matter(dev: Synthesized) -> None:
    config = stage_config("dev", None)
    for group in Group:
        duration = alarm(dev, f"{group.value}-duration-p99")
        assert (duration["MetricName"], duration["ExtendedStatistic"]) == ("Duration", "p99")
        timeout = function_of(dev, group)[1]["Properties"]["Timeout"]
        assert duration["Threshold"] == 0.8 * timeout * 1000
        concurrency = alarm(dev, f"{group.value}-concurrency")
        assert concurrency["MetricName"] == "ConcurrentExecutions"
        reserved = function_of(dev, group)[1]["Properties"]["ReservedConcurrentExecutions"]
        assert concurrency["Threshold"] == 0.8 * reserved
    account = alarm(dev, "AccountConcurrency")
    assert "Dimensions" not in account
    assert account["Threshold"] == 0.8 * config.account_concurrency_limit
    client_errors = alarm(dev, "Api4xxRate")
    assert (client_errors["MetricName"], client_errors["Statistic"]) == ("4XXError", "Average")
    integration = alarm(dev, "ApiIntegrationLatencyP99")
    assert (integration["MetricName"], integration["ExtendedStatistic"]) == (
        "IntegrationLatency",
        "p99",
    )
    system_errors = json.dumps(alarm(dev, "TableSystemErrors")["Metrics"])
    for operation in ("GetItem", "Query", "PutItem", "UpdateItem", "TransactWriteItems"):
        assert f'"{operation}"' in system_errors
    assert '"SystemErrors"' in system_errors
    growth = alarm(dev, "ShardCountGrowths")
    assert (growth["Namespace"], growth["Statistic"], growth["Threshold"]) == (
        "Incidents",
        "Sum",
        1,
    )
    by_metric = Counter(a.get("MetricName") for a in alarms(dev))
    live = 1 + len(TABLE_SCHEMA.indexes)  # the table and every index: each one is read
    assert by_metric["ReadThrottleEvents"] == by_metric["WriteThrottleEvents"] == live
    assert by_metric["Throttles"] == len(Group)
    assert by_metric["Errors"] == len(Group) + len(BACKGROUND_FUNCTIONS)
    assert by_metric["5XXError"] == 1
    assert alarm(dev, "ApiLatencyP99")["ExtendedStatistic"] == "p99"


@pytest.mark.parametrize(("name", "every"), [("sweeper", 60), ("shard-mover", 300)])
def test_a_scheduled_run_that_stops_or_cannot_start_is_noticed(
    dev: Synthesized, name: str, every: int
) -> None:
    """Issue 64, point 5: the sweep (the path by which people will be woken) runs every
    minute, the mover every five; a schedule that stopped invoking them raised nothing."""
    stopped = alarm(dev, f"{name}-stopped")
    assert (stopped["MetricName"], stopped["Statistic"], stopped["Period"]) == (
        "Invocations", "Sum", every
    )  # fmt: skip
    assert (stopped["ComparisonOperator"], stopped["Threshold"]) == ("LessThanThreshold", 1)
    assert (stopped["EvaluationPeriods"], stopped["TreatMissingData"]) == (3, "breaching")
    failed = alarm(dev, f"{name}-failed-runs")
    assert failed["MetricName"] == "ApproximateNumberOfMessagesVisible"
    targets = [
        target
        for rule in resources(dev, "AWS::Events::Rule").values()
        if "ScheduleExpression" in rule["Properties"]
        for target in rule["Properties"]["Targets"]
        if "DeadLetterConfig" in target
    ]
    ages = sorted(t["RetryPolicy"]["MaximumEventAgeInSeconds"] for t in targets)
    assert ages == [60, 300], "a run that cannot start by the next goes to the queue"
    assert {t["RetryPolicy"]["MaximumRetryAttempts"] for t in targets} == {2}


def dashboard_metrics(synth: Synthesized) -> list[list[Any]]:
    """Every metric line of the dashboard."""
    body = dashboard_body(synth)
    return [line for widget in body["widgets"] for line in widget["properties"].get("metrics", [])]


def test_dashboard_shows_fan_out_cost_per_list(dev: Synthesized) -> None:
    lines = {
        tuple(item for item in line if not isinstance(item, dict))
        for line in dashboard_metrics(dev)
    }
    for metric in (
        "FanOutReadUnits",
        "FanOutRoundTrips",
        "FanOutMilliseconds",
        "FanOutContributors",
        "FanOutStreams",
    ):
        for name in LISTS:
            assert ("Incidents", metric, "list", name, "service", "incidents") in lines, (
                metric,
                name,
            )


def test_api_gateway_account_settings_outlive_every_stage(
    dev: Synthesized, prod: Synthesized
) -> None:
    """``AWS::ApiGateway::Account`` is one per account and region: no stage may own it."""
    for stage in (dev, prod):
        assert resources(stage, "AWS::ApiGateway::Account") == {}
        for role in resources(stage, "AWS::IAM::Role").values():
            principal = role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
            assert principal["Principal"] != {"Service": "apigateway.amazonaws.com"}
    (account,) = dev.account.find_resources("AWS::ApiGateway::Account").values()
    assert account["DeletionPolicy"] == account["UpdateReplacePolicy"] == "Retain"
    (role_id, role), *_ = dev.account.find_resources("AWS::IAM::Role").items()
    assert account["Properties"]["CloudWatchRoleArn"] == {"Fn::GetAtt": [role_id, "Arn"]}
    assert role["DeletionPolicy"] == "Retain"
    manifest = json.loads((Path(dev.assembly.directory) / "manifest.json").read_text())
    api_stack = manifest["artifacts"]["Incidents-dev-Api"]
    assert "Incidents-ApiGatewayAccount" in api_stack["dependencies"]


def test_sign_in_allows_only_srp_and_refresh(dev: Synthesized) -> None:
    (client,) = resources(dev, "AWS::Cognito::UserPoolClient").values()
    properties = client["Properties"]
    assert sorted(properties["ExplicitAuthFlows"]) == [
        "ALLOW_REFRESH_TOKEN_AUTH",
        "ALLOW_USER_SRP_AUTH",
    ]
    assert properties["AllowedOAuthFlowsUserPoolClient"] is False
    for absent in ("AllowedOAuthFlows", "CallbackURLs", "LogoutURLs"):
        assert absent not in properties
    assert properties["PreventUserExistenceErrors"] == "ENABLED"


def test_hosted_sign_in_uses_the_code_flow_and_the_stages_urls(ops: Synthesized) -> None:
    (client,) = resources(ops, "AWS::Cognito::UserPoolClient").values()
    properties = client["Properties"]
    assert properties["AllowedOAuthFlows"] == ["code"]
    assert properties["CallbackURLs"] == ["https://app.example.com/callback"]
    assert properties["LogoutURLs"] == ["https://app.example.com/"]


def test_retained_stages_protect_the_pool_and_keep_their_logs(
    prod: Synthesized, ops: Synthesized
) -> None:
    (pool,) = resources(prod, "AWS::Cognito::UserPool").values()
    assert pool["DeletionPolicy"] == "Retain"
    assert pool["Properties"]["DeletionProtection"] == "ACTIVE"
    log_groups = resources(prod, "AWS::Logs::LogGroup").values()
    assert len(log_groups) == len(Group) + len(BACKGROUND_FUNCTIONS) + 1  # and the access logs
    assert {g["DeletionPolicy"] for g in log_groups} == {"Retain"}
    (throwaway,) = resources(ops, "AWS::Cognito::UserPool").values()
    assert throwaway["Properties"]["DeletionProtection"] == "INACTIVE"
    assert {g["DeletionPolicy"] for g in resources(ops, "AWS::Logs::LogGroup").values()} == {
        "Delete"
    }


def test_the_senders_mapping_is_bounded(prod: Synthesized) -> None:
    """Issue 37, point 2: the prod template's queue mapping had no ``MaximumConcurrency``."""
    sender, _ = function_of(prod, "lambdas.sender.handler")
    (mapping,) = [
        m["Properties"]
        for m in resources(prod, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": sender}
    ]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": SENDER_MAX_CONCURRENCY}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_the_bus_keeps_an_archive_for_replays(prod: Synthesized) -> None:
    """Issue 37, point 5: the bus had no archive, so an event a consumer lost was gone."""
    (archive,) = resources(prod, "AWS::Events::Archive").values()
    assert archive["Properties"]["RetentionDays"] == 30
    assert archive["Properties"]["EventPattern"] == {"source": ["incidents"]}


def test_queues_follow_the_stages_removal_policy(prod: Synthesized, ops: Synthesized) -> None:
    """Issue 37, point 10: the delivery queues (deliveries not yet made) were deleted with a
    retained stage's stack."""
    queues = resources(prod, "AWS::SQS::Queue").values()
    assert len(queues) == 9  # deliveries, their dead letters, stream failures, unrecovered,
    # the sweep's and the shard mover's failed runs, the firing queue and its dead letters,
    # the receipts' failed invocations
    assert {q["DeletionPolicy"] for q in queues} == {"Retain"}
    assert {q["DeletionPolicy"] for q in resources(ops, "AWS::SQS::Queue").values()} == {"Delete"}


def test_access_logs_say_where_a_request_failed(dev: Synthesized) -> None:
    (stage,) = resources(dev, "AWS::ApiGateway::Stage").values()
    fields = json.loads(stage["Properties"]["AccessLogSetting"]["Format"])
    assert fields["integrationStatus"] == "$context.integrationStatus"
    assert fields["integrationLatency"] == "$context.integrationLatency"
    assert fields["integrationError"] == "$context.integrationErrorMessage"
    assert fields["errorMessage"] == "$context.error.message"
    assert fields["status"] == "$context.status"


def test_table_and_indexes_cap_on_demand_throughput(prod: Synthesized) -> None:
    config = stage_config("prod", json.loads(Path("cdk.json").read_text())["context"]["stages"])
    (table,) = prod.data.find_resources("AWS::DynamoDB::GlobalTable").values()
    properties = table["Properties"]
    write = {"MaxWriteRequestUnits": config.table_max_write_request_units}
    read = {"MaxReadRequestUnits": config.table_max_read_request_units}
    assert properties["WriteOnDemandThroughputSettings"] == write
    (replica,) = properties["Replicas"]
    assert replica["ReadOnDemandThroughputSettings"] == read
    for index in properties["GlobalSecondaryIndexes"]:
        assert index["WriteOnDemandThroughputSettings"] == write
    for index in replica["GlobalSecondaryIndexes"]:
        assert index["ReadOnDemandThroughputSettings"] == read


def test_functions_reserve_the_stages_concurrency(prod: Synthesized) -> None:
    config = stage_config("prod", json.loads(Path("cdk.json").read_text())["context"]["stages"])
    for group in Group:
        properties = function_of(prod, group)[1]["Properties"]
        assert properties["ReservedConcurrentExecutions"] == config.reserved(group)
    for name in SUPPORT_FUNCTIONS:  # bounded too: an authorizer storm, overlapping movers
        properties = function_of(prod, f"lambdas.{name}.handler")[1]["Properties"]
        reserved = properties["ReservedConcurrentExecutions"]
        assert reserved == config.reserved(name) is not None


def test_every_function_of_prod_has_its_share_of_the_accounts_concurrency(
    prod: Synthesized,
) -> None:
    """Events out and the timers too, not only the API: a stream or queue storm in one never
    takes the concurrency the others need, and the docs' table says each share."""
    stages = json.loads(Path("cdk.json").read_text())["context"]["stages"]
    config, dev = stage_config("prod", stages), stage_config("dev", stages)
    ours = {
        resource["Properties"]["Handler"]: resource["Properties"]
        for resource in resources(prod, "AWS::Lambda::Function").values()
        if resource["Properties"].get("Handler", "").startswith("lambdas.")
    }
    unbounded = sorted(h for h, p in ours.items() if "ReservedConcurrentExecutions" not in p)
    assert not unbounded, unbounded
    table = Path("docs/infrastructure.md").read_text()
    for name, reserved in config.reserved_concurrency.items():
        share = f"{reserved / config.account_concurrency_limit:.1%}"
        row = f"| `{name}` | {dev.reserved(name)} | {reserved} | {share} |"
        assert row in table, row


def test_the_shard_mover_runs_at_the_stage_s_pace(synthesized: Stages) -> None:
    """``shardMoverWriteUnits`` reaches the function, which reads it back at cold start."""
    synth = synthesized("paced", {"paced": {"shardMoverWriteUnits": 250}})
    _, function = function_of(synth, "lambdas.shard_mover.handler")
    environment = function["Properties"]["Environment"]["Variables"]
    assert mover_write_units(environment) == 250


def test_timers_fire_from_a_fifo_queue_by_workers_the_stage_counts(prod: Synthesized) -> None:
    """Issue 64, points 1 and 2: one run of the sweep fired every timer itself, and one
    account's lateness could not be told from everyone's."""
    (queue,) = [
        q["Properties"]
        for logical, q in resources(prod, "AWS::SQS::Queue").items()
        if "FiringQueue" in logical
    ]
    assert queue["FifoQueue"] is True
    assert queue["FifoThroughputLimit"] == "perMessageGroupId"
    assert queue["DeduplicationScope"] == "messageGroup"
    assert queue["RedrivePolicy"]["maxReceiveCount"] == 5
    worker, _ = function_of(prod, "lambdas.timer_worker.handler")
    (mapping,) = [
        m["Properties"]
        for m in resources(prod, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": worker}
    ]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": DEFAULT_TIMER_WORKERS}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    (rule,) = resources(prod, "AWS::CloudWatch::InsightRule").values()
    body = json.dumps(rule["Properties"]["RuleBody"])  # a join: the log group's name is a token
    assert '\\"Keys\\": [\\"$.account\\"]' in body
    assert '\\"AggregateOn\\": \\"Max\\"' in body
    alarms = [a["Properties"] for a in resources(prod, "AWS::CloudWatch::Alarm").values()]
    expressions = [
        query["Expression"]
        for a in alarms
        for query in a.get("Metrics", [])
        if "Expression" in query
    ]
    assert any("INSIGHT_RULE_METRIC" in expression for expression in expressions)


RECEIPTS = "lambdas.receipts.handler"


def test_receipts_come_back_through_eventbridge_and_none_is_lost(
    ops: Synthesized, dev: Synthesized
) -> None:
    """SES's events of the pages' configuration set go to the default bus, where one rule
    (End User Messaging's events too) invokes the receipts function; what EventBridge
    could not hand over, and what failed the function's tries, lands in one queue."""
    (destination,) = resources(ops, "AWS::SES::ConfigurationSetEventDestination").values()
    sent_to = destination["Properties"]["EventDestination"]
    assert sorted(sent_to["MatchingEventTypes"]) == ["bounce", "delivery", "reject",
                                                      "renderingFailure"]  # fmt: skip
    assert ":event-bus/default" in json.dumps(sent_to["EventBridgeDestination"]["EventBusArn"])
    assert not resources(dev, "AWS::SES::ConfigurationSetEventDestination"), "no domain"
    function, _ = function_of(ops, RECEIPTS)
    (rule,) = [r["Properties"] for r in resources(ops, "AWS::Events::Rule").values()
               if r["Properties"].get("Targets", [{}])[0].get("Arn")
               == {"Fn::GetAtt": [function, "Arn"]}]  # fmt: skip
    assert rule["EventPattern"] == {
        "source": list(SOURCES),
        "detail-type": [kind for kinds in SOURCES.values() for kind in kinds],
    }
    (target,) = rule["Targets"]
    dead_letters = target["DeadLetterConfig"]["Arn"]
    (invoked,) = [c["Properties"] for c in resources(ops, "AWS::Lambda::EventInvokeConfig").values()
                  if c["Properties"]["FunctionName"] == {"Ref": function}]  # fmt: skip
    assert invoked["DestinationConfig"]["OnFailure"]["Destination"] == dead_letters
    tables = [s for s in policy_statements(ops, RECEIPTS) if "dynamodb:" in json.dumps(s)]
    assert sorted(json.dumps(s["Action"]) for s in tables) == ['"dynamodb:Query"',
                                                               '"dynamodb:UpdateItem"']  # fmt: skip
    (query,) = [s for s in tables if s["Action"] == "dynamodb:Query"]
    assert json.dumps(query["Resource"]).endswith('/index/GSI3"]]}'), "GSI3 alone"
