"""cdk-nag: the few AwsSolutions findings we accept, each on the construct it concerns and
with the reason it does not apply there (`accept`). Everything else must pass."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct

CLOUDWATCH_ROLE_POLICY = (
    "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/"
    "service-role/AmazonAPIGatewayPushToCloudWatchLogs]"
)
XRAY_WILDCARD = "AwsSolutions::AwsSolutions-IAM5[Resource::*]"
COGNITO_PLUS = "AwsSolutions::AwsSolutions-COG8"
COGNITO_MFA = "AwsSolutions::AwsSolutions-COG2"
PINNED_RUNTIME = "AwsSolutions::AwsSolutions-L1"
MANUAL_ROTATION = "AwsSolutions::AwsSolutions-SMG4"
NO_WAF = "AwsSolutions::AwsSolutions-APIG3"
PREFLIGHT_AUTH = "AwsSolutions::AwsSolutions-APIG4"
PREFLIGHT_COGNITO = "AwsSolutions::AwsSolutions-COG4"
FAILURE_DESTINATION = "AwsSolutions::AwsSolutions-SQS3"
PREFLIGHT_REASON = "A CORS preflight (OPTIONS) is answered by the gateway, without credentials."
INTEGRATION_KEY_REASON = (
    "Monitoring tools send alerts with an integration key, not a Cognito user's token: the "
    "handler checks the key (stored hashed, revocable) before anything else."
)
FEED_TOKEN_REASON = (
    "Calendar apps subscribe to a feed by URL alone, without headers: the token in the path "
    "is the credential, which the handler checks (stored hashed, replaced by a rotation)."
)
PAGE_LINK_REASON = (
    "A page's link is opened from an email, a text or a chat message, without signing in: "
    "the token in the path is the credential (an HMAC, stored only as its digest, single-use "
    "and expiring), which the handler checks."
)
REQUEST_AUTHORIZER_REASON = (
    "The API's REQUEST authorizer verifies the pool's ID tokens itself (Powertools' JWT "
    "verifier against the pool's keys) and accepts the account's API keys beside them: "
    "one authorizer for people and machines (docs/decisions/011)."
)

REASONS = {
    CLOUDWATCH_ROLE_POLICY: (
        "API Gateway's account-level CloudWatch role uses the AWS managed policy "
        "AmazonAPIGatewayPushToCloudWatchLogs, which exists for exactly this role."
    ),
    XRAY_WILDCARD: (
        "Only X-Ray's PutTraceSegments/PutTelemetryRecords use Resource *: they have no "
        "resource-level permissions. Every DynamoDB statement names the table and indexes."
    ),
    COGNITO_PLUS: (
        "Cognito threat protection needs the Plus feature plan (priced per monthly active "
        "user); self sign-up is disabled and users are created by administrators."
    ),
    COGNITO_MFA: (
        "MFA is OPTIONAL (TOTP) so the first administrator can sign in from the CLI; "
        "raise it to REQUIRED per organisation policy."
    ),
    PINNED_RUNTIME: (
        "The runtime is pinned to Python 3.13 on purpose: the layer's native wheels are "
        "built for exactly that runtime and architecture."
    ),
    MANUAL_ROTATION: (
        "The cursor signing key is not rotated automatically: rotation invalidates every "
        "open cursor (clients restart from page 1). Rotate it by hand when needed."
    ),
    NO_WAF: (
        "AWS WAF is priced per web ACL and rule; attach one per deployment when the API "
        "is public. Stage throttling and Cognito limit abuse in the meantime."
    ),
    FAILURE_DESTINATION: (
        "This queue is a dead-letter queue: the on-failure destination of the table "
        "stream's event source mapping (cdk-nag only recognizes a queue's redrive target)."
    ),
    PREFLIGHT_AUTH: PREFLIGHT_REASON,
    PREFLIGHT_COGNITO: PREFLIGHT_REASON,
}


def accept(construct: IConstruct, *rules: str, reason: str | None = None) -> None:
    """Acknowledge `rules` on `construct` and its children, with the reasons above (or
    `reason`, where the construct has its own)."""
    Validations.of(construct).acknowledge(
        *[Acknowledgment(id=rule, reason=reason or REASONS[rule]) for rule in rules]
    )
