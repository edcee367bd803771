"""Figures kept as mergeable aggregates: one item per account or team, shard, day and
severity, moved only by DynamoDB's ``ADD``.

An aggregate holds exact counts and sums, and each duration's DDSketch bins (DataDog's
`ddsketch`: a value's bin is its logarithmic mapping's key, so adding a value is adding 1
to one numbered attribute, and two aggregates merge by adding bins). Quantiles read back
are within the sketch's relative accuracy of the exact ones. An incident's figures always
go to one of `SHARDS` items (its id's hash), so a busy account's day spreads its writes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import xxhash
from ddsketch import DDSketch
from ddsketch.mapping import LogarithmicMapping

from dynashard import build_key
from dynashard.query import Item
from incidents.insights.figures import Figure, Measure
from incidents.table import item_key

RELATIVE_ACCURACY = 0.01
"""A quantile read back is within 1 % of the exact one (DDSketch's guarantee)."""
SHARDS = 4
"""Items an account's (or a team's) day and severity spread over: each takes DynamoDB's
per-item write rate, so four take four times a busy day's incidents."""
ALL_TEAMS = "all"
"""The account-wide aggregates' place among the teams."""
INSIGHTS = "insights"
ZERO_BIN = "zero"
MAPPING = LogarithmicMapping(RELATIVE_ACCURACY)
COUNTS = {
    Measure.OPENED: "opened",
    Measure.ACKNOWLEDGED: "acknowledged",
    Measure.RESOLVED: "resolved",
    Measure.REOPENED: "reopened",
}
UNACKNOWLEDGED = "resolved_unacknowledged"
AUTO_RESOLVED = "auto_resolved"
SUMS = {Measure.ACKNOWLEDGED: "ack_seconds", Measure.RESOLVED: "resolve_seconds"}
BINS = {Measure.ACKNOWLEDGED: "a:", Measure.RESOLVED: "r:"}
"""Each duration's bin attributes: ``a:<key>`` (to first acknowledge), ``r:<key>`` (to
resolve); ``a:zero`` and ``r:zero`` count zeros."""
Added = dict[str, float]
"""What figures add to one aggregate, by attribute."""


def partition(account: str, team: str, shard: int) -> str:
    """``<acct>#insights#<team or all>#<shard>``: a team's (or the account's) aggregates."""
    return build_key(account, INSIGHTS, team, str(shard))


def sort_key(day: str, severity: str) -> str:
    """``<day>#<severity>``: a range of days is one key range."""
    return build_key(day, severity, kind="sort")


def shard_of(incident_id: str) -> int:
    """The shard all of an incident's figures go to."""
    return xxhash.xxh64_intdigest(incident_id.encode()) % SHARDS


def bin_name(measure: Measure, seconds: float) -> str:
    """The attribute counting `seconds` of `measure` (its sketch bin)."""
    prefix = BINS[measure]
    if seconds <= MAPPING.min_possible:
        return prefix + ZERO_BIN
    return f"{prefix}{MAPPING.key(seconds)}"


def additions(account: str, figures: Iterable[Figure]) -> dict[tuple[str, str], Added]:
    """What `figures` of `account` add to each aggregate, by its key (one entry per
    item, so a transaction names each item once)."""
    added: dict[tuple[str, str], Added] = {}
    for figure in figures:
        shard = shard_of(figure.incident_id)
        for team in (ALL_TEAMS, *figure.teams):
            key = (partition(account, team, shard), sort_key(figure.day, figure.severity))
            into = added.setdefault(key, {})
            for name, value in _added(figure).items():
                into[name] = into.get(name, 0) + value
    return added


def _added(figure: Figure) -> Added:
    added: Added = {COUNTS[figure.measure]: 1}
    if figure.unacknowledged:
        added[UNACKNOWLEDGED] = 1
    if figure.auto_resolved:
        added[AUTO_RESOLVED] = 1
    if figure.seconds is not None:
        added[SUMS[figure.measure]] = figure.seconds
        added[bin_name(figure.measure, figure.seconds)] = 1
    return added


def add_operation(table_name: str, key: tuple[str, str], added: Mapping[str, float]) -> Item:
    """A transaction's Update adding `added` to the aggregate at `key` (made if missing)."""
    names = {f"#n{n}": name for n, name in enumerate(added)}
    values = {f":v{n}": {"N": _number(value)} for n, value in enumerate(added.values())}
    adds = ", ".join(f"#n{n} :v{n}" for n in range(len(added)))
    return {
        "Update": {
            "TableName": table_name,
            "Key": item_key(key[0], key[1]),
            "UpdateExpression": f"SET #type = :type ADD {adds}",
            "ExpressionAttributeNames": {"#type": "Type", **names},
            "ExpressionAttributeValues": {":type": {"S": INSIGHTS}, **values},
        }
    }


def add_operations(table_name: str, account: str, figures: Iterable[Figure]) -> list[Item]:
    """A transaction's Updates adding `figures` of `account` to their aggregates."""
    return [
        add_operation(table_name, key, added) for key, added in additions(account, figures).items()
    ]


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else repr(round(value, 6))


@dataclass
class Aggregate:
    """Aggregates merged: counts, sums and one sketch per duration."""

    counts: Counter[str] = field(default_factory=Counter)
    sums: dict[Measure, float] = field(default_factory=lambda: dict.fromkeys(SUMS, 0.0))
    sketches: dict[Measure, DDSketch] = field(
        default_factory=lambda: {measure: DDSketch(RELATIVE_ACCURACY) for measure in BINS}
    )

    def merge_item(self, item: Item) -> None:
        """Add one stored aggregate."""
        for name, value in item.items():
            if "N" in value:
                self._merge_number(name, float(value["N"]))

    def _merge_number(self, name: str, value: float) -> None:
        for measure, prefix in BINS.items():
            if name.startswith(prefix):
                self.sketches[measure].add(_bin_value(name[len(prefix) :]), value)
                return
        for measure, total in SUMS.items():
            if name == total:
                self.sums[measure] += value
                return
        self.counts[name] += int(value)

    def count(self, measure: Measure) -> int:
        """Incidents with the figure."""
        return self.counts[COUNTS[measure]]

    def mean(self, measure: Measure) -> float | None:
        """The exact mean seconds of a duration (None: no figure)."""
        counted = self.count(measure)
        return self.sums[measure] / counted if counted else None

    def quantile(self, measure: Measure, q: float) -> float | None:
        """Seconds at quantile `q` by the nearest-rank definition (the smallest value with at
        least `q` of the values at or below it: the p99 of two is the larger), within
        `RELATIVE_ACCURACY` (None: no figure). The sketch reads rank ``q' x (n - 1)``, so
        the nearest rank is asked of it as that."""
        sketch = self.sketches[measure]
        count = round(sketch.count)
        if count <= 1:
            return sketch.get_quantile_value(q)
        rank = max(math.ceil(round(q * count, 9)) - 1, 0)  # 0-based; rounding spares 9.0000001
        value: float | None = sketch.get_quantile_value(rank / (count - 1))
        return value


def _bin_value(suffix: str) -> float:
    """A value in the bin: the sketch maps it back to the same key."""
    return 0.0 if suffix == ZERO_BIN else float(MAPPING.value(int(suffix)))
