"""Hypothesis settings for the tests that drive the real code and an independent model of it
with the same random steps against a shared table."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def against_a_model(max_examples: int) -> settings:
    """`max_examples` examples, the same ones at every run (a failure reproduces on any
    machine), with no deadline (each example waits on DynamoDB Local) and without the
    health checks a fixture shared across examples trips."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
