"""Which due timers a sweep hands on, and in what order: accounts in rounds, each within its
firing rate.

The due index lists a minute's timers by due time, every account's together, so one account
with a backlog (a hundred thousand heartbeats expiring in a partition) would be fired
before an account whose one timer came due a second later. A run instead takes each
account's timers in rounds: every account's first, then every account's second, ... (each
account's own in due order), so no backlog runs ahead of another account's first timer.
And each account fires at most its rate a run: what is beyond it stays due in the table,
read again next run, and never queued, so a backlog waits for its own account only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import zip_longest

from dynashard.query import Item

DEFAULT_FIRINGS_PER_MINUTE = 2000
"""An account's timers fired a minute: a partition expiring a thousand heartbeats fires in
one run; a larger backlog drains at this rate without slowing other accounts."""


def account_of(item: Item) -> str:
    """The account of a listed timer ('' for an unreadable item: it is fired, and fails,
    as its own account)."""
    return str(item.get("account", {}).get("S", ""))


@dataclass
class FiringBudget:
    """What each account may still fire in this run (its rate a minute)."""

    per_account: int = DEFAULT_FIRINGS_PER_MINUTE
    spent: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    held: int = 0
    """Timers this run left due because their account reached its rate."""

    def in_rounds(self, items: Iterable[Item]) -> list[Item]:
        """`items` (in due order) as rounds across accounts, each account's cut at what its
        budget has left; the rest is counted as held."""
        by_account: dict[str, list[Item]] = defaultdict(list)
        for item in items:
            by_account[account_of(item)].append(item)
        taken: list[list[Item]] = []
        for account, listed in by_account.items():
            room = max(0, self.per_account - self.spent[account])
            taken.append(listed[:room])
            self.spent[account] += len(taken[-1])
            self.held += len(listed) - len(taken[-1])
        return list(_rounds(taken))


def _rounds(lists: list[list[Item]]) -> Iterator[Item]:
    """The first of each list, then the second of each, ..."""
    for round_ in zip_longest(*lists):
        yield from (item for item in round_ if item is not None)
