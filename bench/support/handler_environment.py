"""The environment a bench's handler processes run under: the stage's variables for one
table on the local engine, quiet (no traces, errors only in the logs)."""

from __future__ import annotations


def handler_environment(table: str, endpoint: str, **settings: str) -> dict[str, str]:
    """What a container of the bench's handlers reads at cold start, plus `settings` (the
    bench's quotas and the like)."""
    return {
        "TABLE_NAME": table,
        "DYNAMODB_ENDPOINT": endpoint,
        "CURSOR_SECRET": f"bench-{table}-cursor-secret".ljust(40, "0"),
        "POWERTOOLS_SERVICE_NAME": "incidents",
        "POWERTOOLS_METRICS_NAMESPACE": "IncidentsBench",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "ERROR",
        **settings,
    }
