"""The dashboard as synthesized (issue 53): under its Incidents header, MTTA and MTTR p50 and
p90 with a line per severity, incidents opened per severity, alerts in, webhook deliveries
and failures, throttles and shard changes, the API's 4xx, 5xx and latency; the functions'
own metrics in it keep to the service and severity dimensions."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from incidents.models import Severity
from stacks.functions import METRICS_NAMESPACE
from tests.helpers.synth import Synthesized, dashboard_body

SERVICE = ("service", "incidents")


class Line(NamedTuple):
    """One metric line of a graph: what it plots and with which statistic."""

    namespace: str
    metric: str
    dimensions: frozenset[tuple[str, str]]
    stat: str


def lines_of(widget: dict[str, Any]) -> list[Line]:
    """A graph's lines (CloudWatch's ``[namespace, name, dim, value, ..., {options}]``)."""
    properties = widget["properties"]
    lines = []
    for entry in properties.get("metrics", []):
        options = entry[-1] if isinstance(entry[-1], dict) else {}
        namespace, metric, *pairs = [item for item in entry if not isinstance(item, dict)]
        stat = options.get("stat", properties.get("stat", "Average"))
        dimensions = frozenset(zip(pairs[::2], pairs[1::2], strict=True))
        lines.append(Line(namespace, metric, dimensions, stat))
    return lines


def incidents_section(synth: Synthesized) -> list[list[Line]]:
    """The lines of each graph between the Incidents header and the next header."""
    widgets = dashboard_body(synth)["widgets"]
    headers = sorted(w["y"] for w in widgets if w["type"] == "text")
    (top,) = [
        w["y"]
        for w in widgets
        if w["type"] == "text" and w["properties"]["markdown"].startswith("## Incidents\n")
    ]
    below = [y for y in headers if y > top]
    bottom = below[0] if below else float("inf")
    return [lines_of(w) for w in widgets if w["type"] == "metric" and top < w["y"] < bottom]


@pytest.fixture(scope="module")
def section(dev: Synthesized) -> list[list[Line]]:
    return incidents_section(dev)


def test_the_incidents_section_opens_the_dashboard(dev: Synthesized) -> None:
    (first, *_) = sorted(dashboard_body(dev)["widgets"], key=lambda w: (w["y"], w["x"]))
    assert first["type"] == "text"
    assert first["properties"]["markdown"].startswith("## Incidents\n")


@pytest.mark.parametrize(
    ("metric", "stat"),
    [
        ("SecondsToFirstAck", "p50"),
        ("SecondsToFirstAck", "p90"),
        ("SecondsToResolve", "p50"),
        ("SecondsToResolve", "p90"),
        ("IncidentsOpened", "Sum"),
    ],
)
def test_a_graph_has_a_line_per_severity(section: list[list[Line]], metric: str, stat: str) -> None:
    wanted = {
        Line(METRICS_NAMESPACE, metric, frozenset({SERVICE, ("severity", s.value)}), stat)
        for s in Severity
    }
    assert any(wanted <= set(lines) for lines in section), (metric, stat)


@pytest.mark.parametrize(
    ("metric", "stat"),
    [
        ("AlertsReceived", "Sum"),
        ("DeliveriesSucceeded", "Sum"),
        ("DeliveriesPending", "Sum"),
        ("DeliveriesFailed", "Sum"),
        ("ShardCountGrowths", "Sum"),
        ("ShardItemsMoved", "Sum"),
        ("ShardMovesRunning", "Maximum"),
    ],
)
def test_a_graph_has_the_functions_figure(
    section: list[list[Line]], metric: str, stat: str
) -> None:
    wanted = Line(METRICS_NAMESPACE, metric, frozenset({SERVICE}), stat)
    assert any(wanted in lines for lines in section), (metric, stat)


@pytest.mark.parametrize(
    ("namespace", "metric", "stat"),
    [
        ("AWS/DynamoDB", "ReadThrottleEvents", "Sum"),
        ("AWS/DynamoDB", "WriteThrottleEvents", "Sum"),
        ("AWS/ApiGateway", "4XXError", "Sum"),
        ("AWS/ApiGateway", "5XXError", "Sum"),
        ("AWS/ApiGateway", "Latency", "p50"),
        ("AWS/ApiGateway", "Latency", "p99"),
    ],
)
def test_a_graph_has_the_services_figure(
    section: list[list[Line]], namespace: str, metric: str, stat: str
) -> None:
    found = {(line.namespace, line.metric, line.stat) for lines in section for line in lines}
    assert (namespace, metric, stat) in found


def test_the_functions_metrics_keep_to_service_and_severity(section: list[list[Line]]) -> None:
    """A team or account dimension would make a metric (and a bill) per tenant."""
    ours = [line for lines in section for line in lines if line.namespace == METRICS_NAMESPACE]
    assert ours
    for line in ours:
        assert {name for name, _ in line.dimensions} <= {"service", "severity"}, line
