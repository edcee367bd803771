"""How far an incident's figures are counted, kept on its publish position (whose writer,
`incidents.events_out.publish_order`, moves it with this module's part of the update).

Events are folded strictly one after another from event 1: an event the progress has
passed is counted already, and an event beyond the next one means history this incident's
progress never saw (an incident older than insights), which only the backfill counts. The
progress moves in the same transaction as the figures it adds, under a condition on its
value as read, so the stream's retries and a backfill racing the stream count each event
once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dynashard.query import Item
from incidents.insights.figures import Figure, Life, follow
from incidents.models import TimelineEvent
from incidents.updates import UpdatePart

SEQ = "insights_seq"
LIFE = "insights_life"


@dataclass(frozen=True)
class Progress:
    """Events 1..`seq` of an incident are counted; `life` is what they left."""

    seq: int = 0
    life: Life | None = None


def progress_from(item: Item | None) -> Progress:
    """The progress stored on an item (none yet: nothing counted)."""
    if item is None or SEQ not in item:
        return Progress()
    life = Life.model_validate_json(item[LIFE]["S"]) if LIFE in item else None
    return Progress(int(item[SEQ]["N"]), life)


def counted(progress: Progress, events: Iterable[TimelineEvent]) -> tuple[Progress, list[Figure]]:
    """The progress after `events` (in ``seq`` order), and the figures of those it counts."""
    figures: list[Figure] = []
    for event in events:
        if event.seq != progress.seq + 1:
            continue
        life, made = follow(progress.life, event)
        progress = Progress(event.seq, life)
        figures += made
    return progress, figures


def progress_part(was: Progress, now: Progress) -> UpdatePart:
    """The progress moved from `was` to `now` on the item that keeps it, under the condition
    that it still reads `was` (nothing stored reads as 0)."""
    names = {"#iseq": SEQ}
    values: Item = {":iseq": {"N": str(now.seq)}, ":iwas": {"N": str(was.seq)}}
    clauses = ["#iseq = :iseq"]
    if now.life is not None:  # DynamoDB refuses a name or value the expressions do not use
        clauses.append("#ilife = :ilife")
        names["#ilife"] = LIFE
        values[":ilife"] = {"S": now.life.model_dump_json()}
    condition = "(attribute_not_exists(#iseq) OR #iseq = :iwas)"
    return UpdatePart(tuple(clauses), condition, names, values)
