"""Calls the real Lambda handlers with API Gateway proxy events, as the deployed API does."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventModel

from incidents.store import Caller
from lambdas.http.principal import context_of
from lambdas.http.responses import documented_responses
from lambdas.routes import ROUTES, Group
from local.api.proxy_events import LocalLambdaContext, json_body, proxy_event


@dataclass(frozen=True)
class Reply:
    """A handler's answer: status, parsed JSON body (None if empty or not JSON) and
    headers."""

    status: int
    body: Any
    headers: dict[str, str]
    text: str = ""
    """The body exactly as the handler sent it."""


class Api:
    """Each route of the route table, served by its group's real handler."""

    def __init__(self) -> None:
        self.handlers: dict[Group, Callable[[dict[str, Any], Any], dict[str, Any]]] = {
            group: importlib.import_module(f"lambdas.{group.value}").handler for group in Group
        }
        self.serving: Group | None = None
        """The group whose handler runs now, for the call log."""

    def call(
        self,
        name: str,
        who: Caller | None,
        path: Mapping[str, str] | None = None,
        *,
        query: Mapping[str, Sequence[str]] | None = None,
        body: Any = None,
        raw_body: str | None = None,
        headers: Mapping[str, str] | None = None,
        authorizer: Mapping[str, str] | None = None,
        stage: str | None = None,
    ) -> Reply:
        """Call route `name` as `who` (None: no authorizer context at all; `authorizer`: this
        context instead, an API key's or a forged one)."""
        route = ROUTES[name]
        event = proxy_event(
            route,
            path,
            query=query,
            headers=headers,
            body=raw_body if raw_body is not None else (None if body is None else json_body(body)),
            authorizer=authorizer if authorizer is not None else (context_of(who) if who else None),
            stage=stage,
        )
        APIGatewayProxyEventModel.model_validate(event)
        self.serving = route.group
        try:
            response = self.handlers[route.group](event, LocalLambdaContext())
        finally:
            self.serving = None
        assert response["statusCode"] in documented_responses(route), (
            f"{name} answered {response['statusCode']}, which its document does not declare"
        )
        text = response.get("body") or ""
        headers = dict(response.get("headers") or {})
        for header, values in (response.get("multiValueHeaders") or {}).items():
            headers[header] = ", ".join(values)
        is_json = "json" in headers.get("Content-Type", "application/json")
        return Reply(response["statusCode"], json.loads(text) if text and is_json else None,
                     headers, text)  # fmt: skip
