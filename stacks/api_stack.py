"""API stack: Cognito, the REST API from the route table, one Lambda per handler group.

Every route but ``POST /alerts`` has the REQUEST authorizer (people's Cognito ID tokens and
the accounts' API keys, `lambdas.authorizer`); each function gets exactly the table actions of
its group (`stacks.permissions`), the shared layer, X-Ray tracing and a log group with the
stage's retention. The cursor signing key is generated into Secrets Manager and read by the
functions through Powertools Parameters.
"""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import CfnOutput, Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from lambdas.http.cors import EXPOSED_HEADERS, MAX_AGE_SECONDS, REQUEST_HEADERS
from lambdas.http.responses import RETRY_AFTER_SECONDS, ErrorCode
from lambdas.routes import ROUTES, Group
from lambdas.settings import USER_POOL_CLIENT_ID, USER_POOL_ID
from stacks.alarm_alerts import AlarmAlerts
from stacks.api_routes import Mount, RouteStack, routes_by_subject
from stacks.config import StageConfig
from stacks.event_delivery import EventDelivery, Sources
from stacks.functions import (
    METRICS_NAMESPACE,
    FunctionSpec,
    Runtime,
    entry_point,
    handler_function,
)
from stacks.monitoring import Monitoring, Watched
from stacks.nag import (
    COGNITO_MFA,
    COGNITO_PLUS,
    MANUAL_ROTATION,
    NO_WAF,
    PINNED_RUNTIME,
    PREFLIGHT_AUTH,
    PREFLIGHT_COGNITO,
    XRAY_WILDCARD,
    accept,
)
from stacks.permissions import (
    AUTHORIZER_TABLE_ACTIONS,
    INDEX_READERS,
    QUOTA_KEYS,
    TABLE_ACTIONS,
)
from stacks.shard_maintenance import ShardMaintenance
from stacks.shared_layer import shared_layer
from stacks.timers import Timers

TIMEOUT = Duration.seconds(10)
AUTHORIZER_TIMEOUT = Duration.seconds(5)
"""A cold start, the pool's keys fetched once, one point read: well inside API Gateway's
29 s, and a hung call fails fast as a 500 rather than holding the request."""
MEMORY_MB = {
    Group.INCIDENT_QUERIES: 1024,
    Group.INCIDENT_COMMANDS: 512,
    Group.TEAMS: 512,
    Group.WEBHOOKS: 512,
    Group.ALERTS: 512,
    Group.SCHEDULES: 1024,
}
"""Lists fan out over up to 16 threads, schedules render shifts: more memory buys the CPU."""
GATEWAY_ERRORS: dict[apigw.ResponseType, tuple[ErrorCode, str | None]] = {
    apigw.ResponseType.UNAUTHORIZED: (ErrorCode.UNAUTHORIZED, None),
    apigw.ResponseType.EXPIRED_TOKEN: (ErrorCode.UNAUTHORIZED, None),
    apigw.ResponseType.UNSUPPORTED_MEDIA_TYPE: (ErrorCode.UNSUPPORTED_MEDIA_TYPE, None),
    apigw.ResponseType.ACCESS_DENIED: (ErrorCode.FORBIDDEN, None),
    apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN: (ErrorCode.NOT_FOUND, "404"),
    apigw.ResponseType.BAD_REQUEST_BODY: (ErrorCode.VALIDATION_ERROR, None),
    apigw.ResponseType.BAD_REQUEST_PARAMETERS: (ErrorCode.VALIDATION_ERROR, None),
    apigw.ResponseType.REQUEST_TOO_LARGE: (ErrorCode.PAYLOAD_TOO_LARGE, None),
    apigw.ResponseType.THROTTLED: (ErrorCode.THROTTLED, None),
    apigw.ResponseType.QUOTA_EXCEEDED: (ErrorCode.THROTTLED, None),
    apigw.ResponseType.DEFAULT_4_XX: (ErrorCode.BAD_REQUEST, None),
    apigw.ResponseType.DEFAULT_5_XX: (ErrorCode.INTERNAL_ERROR, None),
}
"""API Gateway's own errors (before any function runs): the API's code, and a status
override (an unknown route is a 404 here, as locally, not REST API's 403)."""
F = apigw.AccessLogField
ACCESS_LOG = {
    "requestId": F.context_request_id(),
    "ip": F.context_identity_source_ip(),
    "user": F.context_authorizer_principal_id(),
    "requestTime": F.context_request_time(),
    "httpMethod": F.context_http_method(),
    "resourcePath": F.context_resource_path(),
    "status": F.context_status(),
    "protocol": F.context_protocol(),
    "responseLength": F.context_response_length(),
    "responseLatency": F.context_response_latency(),
    "integrationStatus": F.context_integration_status(),
    "integrationLatency": F.context_integration_latency(),
    "integrationError": F.context_integration_error_message(),
    "errorMessage": F.context_error_message(),
    "errorType": F.context_error_response_type(),
}
"""One JSON line per request: who, what, the answer, and (for a failure) where it failed:
the function's status and latency, or API Gateway's own error and its type."""


class ApiStack(Stack):
    """The public API of one stage."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        table: dynamodb.ITableV2,
        config: StageConfig,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        self.cursor_secret = secretsmanager.Secret(
            self,
            "CursorSecret",
            description="HMAC key that signs list cursors",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True
            ),
        )
        layer = shared_layer(self, "SharedLayer")
        self.runtime = Runtime(layer, config)
        self.roles: dict[Group, iam.Role] = {}
        self.entry_points: dict[Group, lambda_.IFunction] = {}
        """What API Gateway invokes of each handler group: its function, or the ``live``
        alias where the function starts from a snapshot (`stacks.functions.entry_point`)."""
        self.functions = {group: self._function(group, table) for group in Group}
        self.user_pool, client = self._user_pool()
        self.api = self._rest_api()
        self._gateway_errors()
        self.authorizer = self._request_authorizer(table, self.runtime, client)
        self._invoked_by_the_api()
        self.route_stacks = self._routes(self.authorizer)
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            watched=Watched(table, self.api, self.functions, TIMEOUT, METRICS_NAMESPACE),
            config=config,
        )
        self.monitoring.alarm(  # an authorizer that fails answers every request 500
            "authorizer-errors", self.authorizer_function.metric_errors(), 1, "errors"
        )
        self.events_out = EventDelivery(
            self,
            "EventsOut",
            inputs=Sources(table, self.cursor_secret, self._stage_url()),
            runtime=self.runtime,
            monitoring=self.monitoring,
        )
        self.events_out.grant_enqueue(self.functions[Group.WEBHOOKS])
        self.shards = ShardMaintenance(
            self,
            "Shards",
            table=table,
            runtime=self.runtime,
            monitoring=self.monitoring,
        )
        self.timers = Timers(
            self,
            "Timers",
            table=table,
            runtime=self.runtime,
            monitoring=self.monitoring,
        )
        if config.alarm_integration_key_secret:
            AlarmAlerts(
                self,
                "AlarmAlerts",
                api_url=self.api.url,
                key_secret_name=config.alarm_integration_key_secret,
                monitoring=self.monitoring,
                removal=config.removal,
            )
        self._accept_findings()
        CfnOutput(self, "ApiUrl", value=self.api.url)
        CfnOutput(self, "UserPoolId", value=self.user_pool.user_pool_id)
        CfnOutput(self, "UserPoolClientId", value=client.user_pool_client_id)

    def _stage_url(self) -> str:
        """The stage's execute-api URL, as `RestApi.url` says it, but named by the API's id
        alone: a reference to the stage itself would make what the API's deployment
        depends on (the delivery stack, through the webhooks' grant) depend on it."""
        host = f"{self.api.rest_api_id}.execute-api.{self.region}.{self.url_suffix}"
        return f"https://{host}/{self.config.stage}/"

    def _accept_findings(self) -> None:
        """The cdk-nag findings this stack accepts, each on its own construct."""
        for role in self.roles.values():
            accept(role, XRAY_WILDCARD)
        background = [
            *self.events_out.functions(),
            *self.shards.functions(),
            *self.timers.functions(),
        ]
        for function in [*self.functions.values(), self.authorizer_function, *background]:
            accept(function, PINNED_RUNTIME)
            if function.role and function not in self.functions.values():
                accept(function.role, XRAY_WILDCARD)
        accept(self.user_pool, COGNITO_PLUS, COGNITO_MFA)
        accept(self.cursor_secret, MANUAL_ROTATION)
        accept(self.api.deployment_stage, NO_WAF)
        for method in self.api.methods:  # the routes' nested stacks accept their own
            if method.http_method == "OPTIONS":
                accept(method, PREFLIGHT_AUTH, PREFLIGHT_COGNITO)

    def _function(
        self,
        group: Group,
        table: dynamodb.ITableV2,
    ) -> lambda_.Function:
        spec = FunctionSpec(
            name=group.value,
            handler=group.handler,
            description=f"incidents API: {group.value.replace('_', '-')}",
            memory_mb=MEMORY_MB[group],
            timeout=TIMEOUT,
            reserved=self.config.reserved(group),
            snapshotted=True,
        )
        environment = {
            "TABLE_NAME": table.table_name,
            "CURSOR_SECRET_ARN": self.cursor_secret.secret_arn,
        }
        function, role = handler_function(self, spec, self.runtime, environment)
        self.entry_points[group] = entry_point(function, spec, self.config)
        role.add_to_policy(
            iam.PolicyStatement(actions=list(TABLE_ACTIONS[group]), resources=[table.table_arn])
        )
        if "dynamodb:UpdateItem" not in TABLE_ACTIONS[group]:  # its quota: those items only
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=["dynamodb:UpdateItem"],
                    resources=[table.table_arn],
                    conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [QUOTA_KEYS]}},
                )
            )
        if group in INDEX_READERS:  # an index is only ever queried
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=["dynamodb:Query"],
                    resources=[
                        f"{table.table_arn}/index/{index}" for index in INDEX_READERS[group]
                    ],
                )
            )
        role.add_to_policy(  # grant_read would add DescribeSecret, which nothing calls
            iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue"],
                resources=[self.cursor_secret.secret_arn],
            )
        )
        self.roles[group] = role
        return function

    def _request_authorizer(
        self, table: dynamodb.ITableV2, runtime: Runtime, client: cognito.UserPoolClient
    ) -> apigw.RequestAuthorizer:
        """The authorizer of every route but those machines call with an integration key:
        people's ID tokens and the accounts' API keys, its answer cached per
        ``Authorization`` value."""
        spec = FunctionSpec(
            name="authorizer",
            handler="lambdas.authorizer.handler",
            description="incidents API: authorizer (people's tokens, API keys)",
            memory_mb=512,
            timeout=AUTHORIZER_TIMEOUT,
            reserved=self.config.reserved("authorizer"),
            snapshotted=True,
        )
        environment = {
            "TABLE_NAME": table.table_name,
            USER_POOL_ID: self.user_pool.user_pool_id,
            USER_POOL_CLIENT_ID: client.user_pool_client_id,
        }
        function, role = handler_function(self, spec, runtime, environment)
        role.add_to_policy(
            iam.PolicyStatement(actions=list(AUTHORIZER_TABLE_ACTIONS), resources=[table.table_arn])
        )
        self.authorizer_function, self.authorizer_role = function, role
        return apigw.RequestAuthorizer(
            self,
            "Authorizer",
            handler=entry_point(function, spec, self.config),
            identity_sources=[apigw.IdentitySource.header("Authorization")],
            results_cache_ttl=Duration.seconds(self.config.authorizer_cache_seconds),
        )

    def _user_pool(self) -> tuple[cognito.UserPool, cognito.UserPoolClient]:
        """Users sign in by email; account and user ids are immutable custom attributes
        that only an administrator sets, so no user can move to another tenant."""
        pool = cognito.UserPool(
            self,
            "Users",
            self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(email=True),
            custom_attributes={
                "account_id": cognito.StringAttribute(min_len=32, max_len=32, mutable=False),
                "user_id": cognito.StringAttribute(min_len=32, max_len=32, mutable=False),
            },
            password_policy=cognito.PasswordPolicy(
                min_length=12,
                require_digits=True,
                require_lowercase=True,
                require_uppercase=True,
                require_symbols=True,
            ),
            mfa=cognito.Mfa.OPTIONAL,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            deletion_protection=self.config.removal == RemovalPolicy.RETAIN,
            removal_policy=self.config.removal,
        )
        client = pool.add_client(
            "ApiClient",
            auth_flows=cognito.AuthFlow(user_srp=True),
            **self._hosted_sign_in(),
            prevent_user_existence_errors=True,
            generate_secret=False,
            write_attributes=cognito.ClientAttributes().with_standard_attributes(
                email=True, fullname=True
            ),
            id_token_validity=Duration.hours(1),
        )
        return pool, client

    def _hosted_sign_in(self) -> dict[str, Any]:
        """The OAuth code flow for the stage's callback URLs; no OAuth at all without them
        (CDK's default would allow the implicit flow to https://example.com)."""
        callbacks = list(self.config.sign_in_callback_urls)
        if not callbacks:
            return {"disable_o_auth": True}
        return {
            "o_auth": cognito.OAuthSettings(
                flows=cognito.OAuthFlows(authorization_code_grant=True),
                scopes=[cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL],
                callback_urls=callbacks,
                logout_urls=list(self.config.sign_in_logout_urls) or None,
            )
        }

    def _rest_api(self) -> apigw.RestApi:
        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=self.config.retention,
            removal_policy=self.config.removal,
        )
        return apigw.RestApi(
            self,
            "Api",
            rest_api_name=f"incidents-{self.config.stage}",
            description="Incident management API",
            cloud_watch_role=False,  # account-wide: `stacks.account_stack`, deployed once
            default_cors_preflight_options=self._cors(),
            deploy_options=apigw.StageOptions(
                stage_name=self.config.stage,
                throttling_rate_limit=self.config.throttle_rate_limit,
                throttling_burst_limit=self.config.throttle_burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG)),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                metrics_enabled=True,
                tracing_enabled=True,
            ),
        )

    def _cors(self) -> apigw.CorsOptions | None:
        """The preflight answer for the stage's browser origins, on every resource."""
        if not self.config.cors_origins:
            return None
        return apigw.CorsOptions(
            allow_origins=list(self.config.cors_origins),
            allow_methods=sorted({route.method for route in ROUTES.values()}),
            allow_headers=REQUEST_HEADERS,
            max_age=Duration.seconds(MAX_AGE_SECONDS),
        )

    def _gateway_errors(self) -> None:
        """API Gateway's own errors in the API's JSON shape, readable by the stage's browser
        origin (a gateway response has one static header value: the first origin); a
        throttled answer says when to retry."""
        cors = (
            {
                "Access-Control-Allow-Origin": f"'{self.config.cors_origins[0]}'",
                "Access-Control-Expose-Headers": f"'{','.join(EXPOSED_HEADERS)}'",
                "Vary": "'Origin'",
            }
            if self.config.cors_origins
            else {}
        )
        for response_type, (code, status) in GATEWAY_ERRORS.items():
            template = f'{{"code": "{code.value}", "message": $context.error.messageString}}'
            headers = dict(cors)
            if code is ErrorCode.THROTTLED:
                headers["Retry-After"] = f"'{RETRY_AFTER_SECONDS[429]}'"
            self.api.add_gateway_response(
                f"Error{response_type.response_type}",
                type=response_type,
                status_code=status,
                response_headers=headers or None,
                templates={"application/json": template},
            )

    def _invoked_by_the_api(self) -> None:
        """Each handler function invokable by this API's stage (and by the console's test
        invocations): two permissions per function, not two per method, which would grow
        the stack and each function's policy (at most 20 KB) with every route."""
        stage = self.api.deployment_stage.stage_name
        for function in self.entry_points.values():
            for name, source_stage in (("Stage", stage), ("TestInvoke", "test-invoke-stage")):
                function.add_permission(
                    f"Api{name}Invoke",
                    principal=iam.ServicePrincipal("apigateway.amazonaws.com"),
                    source_arn=self.api.arn_for_execute_api(stage=source_stage),
                )

    def _routes(self, authorizer: apigw.IAuthorizer) -> list[RouteStack]:
        """Every route of the route table, in its subject's nested stack."""
        validator = self.api.add_request_validator(
            "Parameters", validate_request_parameters=True, validate_request_body=True
        )
        mount = Mount(self.api, authorizer, validator, self.entry_points)
        stacks = [
            RouteStack(self, f"{subject}Routes", routes=routes, mount=mount)
            for subject, routes in routes_by_subject().items()
        ]
        if self.config.cors_origins:
            # A path no route has: its preflight is answered too (the OPTIONS the CORS
            # options add to every resource), so a browser sends the request and reads the
            # JSON 404 instead of a network error. Other methods there stay the 404.
            self.api.root.add_resource("{proxy+}")
        return stacks
