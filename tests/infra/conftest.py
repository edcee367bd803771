"""The infrastructure tier: the synthesized app's templates (`tests.helpers.synth`)."""

from __future__ import annotations

import pytest

from tests.helpers.synth import Stages, Synthesized


@pytest.fixture(scope="session")
def dev(synthesized: Stages) -> Synthesized:
    """The dev stage as cdk.json configures it."""
    return synthesized("dev")
