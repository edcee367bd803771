"""Sequences: writers that take at once all succeed, with numbers unique, gapless when no
write fails, and increasing in the order they were taken."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest

from dynashard import Table
from dynashard.testing.dynamodb_local import SINGLE_TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

WRITERS = 8
TAKES = 25


def test_racing_takes_never_fail_and_never_repeat(
    dynamodb: DynamoDBClient, module_table: str
) -> None:
    sequence = Table(dynamodb, module_table, SINGLE_TABLE).sequence()

    def writer(size: int) -> list[range]:
        return [sequence.take("acct-race", size) for _ in range(TAKES)]

    with ThreadPoolExecutor(WRITERS) as pool:
        blocks = [block for taken in pool.map(writer, [1, 2, 3, 1, 5, 1, 2, 1]) for block in taken]

    numbers = sorted(number for block in blocks for number in block)
    assert numbers == list(range(1, TAKES * 16 + 1))  # every take served, none twice, no gap
    assert sequence.current("acct-race") == TAKES * 16


def test_takes_increase_per_writer_and_sequences_are_separate(
    dynamodb: DynamoDBClient, module_table: str
) -> None:
    sequence = Table(dynamodb, module_table, SINGLE_TABLE).sequence()
    assert sequence.current("acct-order") == 0
    first, second = sequence.take("acct-order"), sequence.take("acct-order", 3)
    assert (list(first), list(second)) == ([1], [2, 3, 4])
    assert list(sequence.take("acct-other")) == [1]


def test_a_take_of_nothing_is_refused(dynamodb: DynamoDBClient, module_table: str) -> None:
    sequence = Table(dynamodb, module_table, SINGLE_TABLE).sequence()
    with pytest.raises(ValueError, match="count >= 1, got 0"):
        sequence.take("acct-zero", 0)
