"""The environment a deployed function of the dev stage sees, for running handler code
outside Lambda as Lambda would (ARNs and names are placeholders)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from stacks.config import stage_config

ROOT = Path(__file__).resolve().parents[1]


def lambda_environment() -> dict[str, str]:
    """What a deployed function of the dev stage sees (ARNs and names are placeholders)."""
    stages = json.loads((ROOT / "cdk.json").read_text())["context"]["stages"]
    return {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": f"{ROOT / 'layers' / 'shared' / 'python'}{os.pathsep}{ROOT}",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "LAMBDA_TASK_ROOT": "/var/task",
        "AWS_LAMBDA_FUNCTION_NAME": "incidents-dev",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "TABLE_NAME": "incidents-dev",
        "CURSOR_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:cursor",
        "POWERTOOLS_SERVICE_NAME": "incidents",
        "POWERTOOLS_METRICS_NAMESPACE": "Incidents",
        **stage_config("dev", stages).lambda_environment(),
    }
