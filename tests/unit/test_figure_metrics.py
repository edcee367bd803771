"""The publisher's insights figures as CloudWatch metrics (EMF): one metric per figure,
by severity only, so the dashboard's MTTA and MTTR lines exist and no tenant makes a
metric of its own."""

from __future__ import annotations

import json

import pytest

from incidents.insights.figures import Figure, Measure
from incidents.models import Severity
from lambdas.publisher import report_figures


def test_each_figure_is_one_metric_with_the_severity_dimension(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "incidents")
    teams = ("team_2XHcm1P3qQ2ZkY1bT1nX6yH9aBc",)
    report_figures(
        [
            Figure(Measure.OPENED, "inc_1", "2027-03-01", Severity.SEV1, teams),
            Figure(Measure.ACKNOWLEDGED, "inc_1", "2027-03-01", Severity.SEV1, teams, 42.5),
            Figure(Measure.RESOLVED, "inc_1", "2027-03-01", Severity.SEV2, teams, 600.0),
            Figure(Measure.REOPENED, "inc_1", "2027-03-01", Severity.SEV2, teams),
        ]
    )
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    shown = {
        (name, blob["severity"], blob[name][0])
        for blob in blobs
        for metric in blob["_aws"]["CloudWatchMetrics"]
        for name in [m["Name"] for m in metric["Metrics"]]
    }
    assert shown == {
        ("IncidentsOpened", "SEV1", 1.0),
        ("SecondsToFirstAck", "SEV1", 42.5),
        ("SecondsToResolve", "SEV2", 600.0),
    }
    for blob in blobs:
        (dimensions,) = blob["_aws"]["CloudWatchMetrics"][0]["Dimensions"]
        assert sorted(dimensions) == ["service", "severity"]
