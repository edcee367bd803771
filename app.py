#!/usr/bin/env python3
"""CDK app entry point (`cdk synth`, `cdk deploy`)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "layers" / "shared" / "python"))

import aws_cdk as cdk

from stacks.data_stack import DataStack


def main() -> None:
    """Build the app for the stage named in the `stage` context (default `dev`)."""
    app = cdk.App()
    stage = app.node.try_get_context("stage") or "dev"
    DataStack(app, f"Incidents-{stage}-Data")
    app.synth()


if __name__ == "__main__":
    main()
