"""The API's routes, split by subject into nested stacks (decision 016): each subject's
resources and methods live in a template of their own, so no stack nears CloudFormation's
500 resources as subjects are added, while the API, its authorizer, its stage and its
deployment stay one, in the parent stack.

A subject owns whole subtrees of paths (the first path part), so no two nested stacks make
the same API Gateway resource. A subtree's resource is made in its nested stack as a child
of the API's root, so its methods are the API's own: the stage's deployment follows them as
it follows methods of its own stack. The handler functions are invoked through one
permission per function for the stage (`stacks.api_stack`), not one per method.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Aws, NestedStack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from lambdas.routes import ROUTES, Group, Route
from stacks.nag import (
    FEED_TOKEN_REASON,
    INTEGRATION_KEY_REASON,
    PAGE_LINK_REASON,
    PREFLIGHT_AUTH,
    PREFLIGHT_COGNITO,
    REQUEST_AUTHORIZER_REASON,
    accept,
)

SUBJECTS: Mapping[str, tuple[str, ...]] = {
    "Incidents": ("incidents", "events", "changes", "insights", "page-links"),
    "People": ("me", "teams", "users"),
    "Webhooks": ("webhooks",),
    "Machines": ("alerts", "v2", "integrations", "api-keys"),
    "OnCall": ("heartbeats", "maintenance-windows", "schedules", "oncalls", "escalation-policies"),
}
"""Each nested stack's subject and the first path parts whose routes it holds."""


def first_part(route: Route) -> str:
    """The path part under the API's root that a route's subtree starts with."""
    return route.path.strip("/").split("/")[0]


def routes_by_subject(routes: Mapping[str, Route] = ROUTES) -> dict[str, list[Route]]:
    """The routes of each subject, in the route table's order; a route whose first path
    part no subject names fails the synth, naming it."""
    subject_of = {part: subject for subject, parts in SUBJECTS.items() for part in parts}
    grouped: dict[str, list[Route]] = {subject: [] for subject in SUBJECTS}
    for name, route in routes.items():
        part = first_part(route)
        if part not in subject_of:
            raise ValueError(
                f"route {name} ({route.method} {route.path}): no subject in "
                f"stacks.api_routes.SUBJECTS holds the paths under /{part}"
            )
        grouped[subject_of[part]].append(route)
    return grouped


def lambda_proxy(function: lambda_.IFunction) -> apigw.Integration:
    """The proxy integration `LambdaIntegration` makes, without its two permissions per
    method."""
    return apigw.Integration(
        type=apigw.IntegrationType.AWS_PROXY,
        integration_http_method="POST",
        uri=(
            f"arn:{Aws.PARTITION}:apigateway:{Aws.REGION}:lambda:path/2015-03-31/functions/"
            f"{function.function_arn}/invocations"
        ),
    )


@dataclass(frozen=True)
class Mount:
    """Where the subjects' routes hang: the API, its authorizer and request validator, and
    the handler functions."""

    api: apigw.RestApi
    authorizer: apigw.IAuthorizer
    validator: apigw.IRequestValidator
    functions: Mapping[Group, lambda_.IFunction]


class RouteStack(NestedStack):
    """One subject's resources and methods, each method behind the authorizer (but those
    machines call with an integration key, which their handler checks)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, routes: Sequence[Route], mount: Mount
    ) -> None:
        super().__init__(scope, construct_id, description=f"incidents API: {construct_id}")
        integrations = {
            group: lambda_proxy(mount.functions[group])
            for group in dict.fromkeys(route.group for route in routes)
        }
        subtrees = {
            part: apigw.Resource(self, part, parent=mount.api.root, path_part=part)
            for part in dict.fromkeys(first_part(route) for route in routes)
        }
        for route in routes:
            part, _, rest = route.path.strip("/").partition("/")
            resource = subtrees[part].resource_for_path(rest) if rest else subtrees[part]
            parameters = [p[1:-1] for p in route.path.split("/") if p.startswith("{")]
            method = resource.add_method(
                route.method,
                integrations[route.group],
                authorizer=mount.authorizer if route.gateway_authorized else None,
                authorization_type=(
                    apigw.AuthorizationType.CUSTOM
                    if route.gateway_authorized
                    else apigw.AuthorizationType.NONE
                ),
                request_validator=mount.validator,
                request_parameters={f"method.request.path.{p}": True for p in parameters},
            )
            if route.integration_key:  # its handler checks the key
                accept(method, PREFLIGHT_AUTH, PREFLIGHT_COGNITO, reason=INTEGRATION_KEY_REASON)
            elif route.feed_token:  # its handler checks the token in the path
                accept(method, PREFLIGHT_AUTH, PREFLIGHT_COGNITO, reason=FEED_TOKEN_REASON)
            elif route.page_link:  # so does a page's link's
                accept(method, PREFLIGHT_AUTH, PREFLIGHT_COGNITO, reason=PAGE_LINK_REASON)
            else:
                accept(method, PREFLIGHT_COGNITO, reason=REQUEST_AUTHORIZER_REASON)
