"""A transaction that moves an account's count is tried again when a concurrent one
conflicted with it (DynamoDB cancels two writes of the count item at the same instant
against each other), and a conflict that lasts is still the caller's 409."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from incidents import account_limits
from incidents.account_limits import COUNT_TRIES, counted
from incidents.errors import VersionConflictError


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(account_limits, "CONFLICT_PAUSE_SECONDS", 0.0)


def conflicting(times: int) -> tuple[list[int], Callable[[], str]]:
    tries: list[int] = []

    def run() -> str:
        tries.append(1)
        if len(tries) <= times:
            raise VersionConflictError("a concurrent change won (TransactionConflict); retry")
        return "created"

    return tries, run


def test_a_conflict_is_tried_again() -> None:
    tries, run = conflicting(COUNT_TRIES - 1)
    assert counted(run) == "created"
    assert len(tries) == COUNT_TRIES


def test_a_conflict_on_every_try_is_the_callers() -> None:
    tries, run = conflicting(COUNT_TRIES)
    with pytest.raises(VersionConflictError):
        counted(run)
    assert len(tries) == COUNT_TRIES
