"""Driving logic written as steps: a generator yields what it needs done and is sent the
answers, so the logic does no I/O and any driver can run it (threads here, an event loop in
`dynashard.aio`)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TypeVar

Y = TypeVar("Y")
S = TypeVar("S")
R = TypeVar("R")


def drive(steps: Generator[Y, S, R], answer: Callable[[Y], S]) -> R:
    """Run `steps` to its end, answering each thing it yields with `answer`; its result."""
    try:
        need = next(steps)
        while True:
            need = steps.send(answer(need))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
