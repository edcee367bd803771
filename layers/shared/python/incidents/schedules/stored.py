"""A schedule's items and the engine's model: the schedule (its name, zone, teams, layer
spans and version), one item per layer version, one per override."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

from dynashard.query import Item
from incidents.items import deserialize, serialize
from incidents.keys import (
    schedule_override_sort_key,
    schedule_sort_key,
    schedule_version_sort_key,
    teams_partition,
)
from incidents.models import parse_timestamp, timestamp
from incidents.schedules.model import Layer, LayerVersion, Override, Restriction, RestrictionType
from incidents.table import TABLE_SCHEMA


@dataclass(frozen=True)
class LayerSpan:
    """What a layer is beside its versions: its name and span."""

    name: str
    start: str
    end: str | None


@dataclass(frozen=True)
class StoredSchedule:
    """A schedule as its items hold it."""

    id: str
    name: str
    description: str | None
    time_zone: str
    team_ids: tuple[str, ...]
    version: int
    created_at: str
    updated_at: str
    spans: tuple[LayerSpan, ...]
    versions: tuple[tuple[LayerVersion, ...], ...]
    """Each layer's versions, in the order they take effect."""
    override_user_ids: tuple[str, ...] = ()
    """Everyone an override ever put on the schedule (it only grows): with the layers'
    users, who may have a shift on it."""

    def user_ids(self) -> tuple[str, ...]:
        """Everyone who may have a shift on the schedule, at any time (sorted)."""
        layered = {user for versions in self.versions for v in versions for user in v.users}
        return tuple(sorted(layered | set(self.override_user_ids)))

    def layers(self) -> list[Layer]:
        """The engine's layers."""
        return [
            Layer(parse_timestamp(span.start), _instant_or_none(span.end), versions)
            for span, versions in zip(self.spans, self.versions, strict=True)
        ]


def _instant_or_none(text: str | None) -> datetime | None:
    return None if text is None else parse_timestamp(text)


def keyed(account: str, sort_key: str, values: dict[str, Any]) -> Item:
    """`values` as an item of the account's teams partition at `sort_key`."""
    keys = {TABLE_SCHEMA.partition_key: teams_partition(account), TABLE_SCHEMA.sort_key: sort_key}
    return serialize({**values, **keys})


def schedule_item(account: str, schedule: StoredSchedule) -> Item:
    return keyed(
        account,
        schedule_sort_key(schedule.id),
        {
            "Type": "schedule",
            "id": schedule.id,
            "name": schedule.name,
            "description": schedule.description,
            "time_zone": schedule.time_zone,
            "team_ids": list(schedule.team_ids),
            "version": schedule.version,
            "created_at": schedule.created_at,
            "updated_at": schedule.updated_at,
            "layers": [
                {"name": s.name, "start": s.start, **({"end": s.end} if s.end else {})}
                for s in schedule.spans
            ],
            "override_user_ids": list(schedule.override_user_ids),
        },
    )


def version_item(account: str, schedule_id: str, layer: int, version: LayerVersion) -> Item:
    effective_from = timestamp(version.effective_from)
    return keyed(
        account,
        schedule_version_sort_key(schedule_id, layer, effective_from),
        {
            "Type": "schedule_version",
            "schedule_id": schedule_id,
            "layer": layer,
            "effective_from": effective_from,
            "time_zone": version.time_zone,
            "users": list(version.users),
            "rotation_virtual_start": timestamp(version.rotation_virtual_start),
            "turn_length_seconds": int(version.turn_length.total_seconds()),
            "restrictions": [
                {
                    "type": r.type.value,
                    "start_time_of_day": r.start_time_of_day.isoformat(),
                    "duration_seconds": int(r.duration.total_seconds()),
                    "start_day_of_week": r.start_day_of_week,
                }
                for r in version.restrictions
            ],
        },
    )


def override_item(account: str, schedule_id: str, override: Override) -> Item:
    end = timestamp(override.end)
    return keyed(
        account,
        schedule_override_sort_key(schedule_id, end, override.id),
        {
            "Type": "schedule_override",
            "schedule_id": schedule_id,
            "id": override.id,
            "start": timestamp(override.start),
            "end": end,
            "user_id": override.user_id,
            "created_at": timestamp(override.created),
            "sequence": override.sequence,
        },
    )


def schedule_from(head: Item, version_items: list[Item]) -> StoredSchedule:
    """The schedule of its head item and its version items (in key order)."""
    values = deserialize(head)
    spans = tuple(
        LayerSpan(layer["name"], layer["start"], layer.get("end")) for layer in values["layers"]
    )
    versions: list[list[LayerVersion]] = [[] for _ in spans]
    for item in version_items:
        found = deserialize(item)
        versions[int(found["layer"])].append(_version(found))
    return StoredSchedule(
        id=values["id"],
        name=values["name"],
        description=values.get("description"),
        time_zone=values["time_zone"],
        team_ids=tuple(values.get("team_ids", [])),
        version=int(values["version"]),
        created_at=values["created_at"],
        updated_at=values["updated_at"],
        spans=spans,
        versions=tuple(tuple(v) for v in versions),
        override_user_ids=tuple(values.get("override_user_ids", [])),
    )


def _version(values: dict[str, Any]) -> LayerVersion:
    return LayerVersion(
        effective_from=parse_timestamp(values["effective_from"]),
        time_zone=values["time_zone"],
        users=tuple(values["users"]),
        rotation_virtual_start=parse_timestamp(values["rotation_virtual_start"]),
        turn_length=timedelta(seconds=int(values["turn_length_seconds"])),
        restrictions=tuple(
            Restriction(
                RestrictionType(r["type"]),
                time.fromisoformat(r["start_time_of_day"]),
                timedelta(seconds=int(r["duration_seconds"])),
                int(r["start_day_of_week"]),
            )
            for r in values["restrictions"]
        ),
    )


def override_from(item: Item) -> Override:
    values = deserialize(item)
    return Override(
        id=values["id"],
        start=parse_timestamp(values["start"]),
        end=parse_timestamp(values["end"]),
        user_id=values["user_id"],
        created=parse_timestamp(values["created_at"]),
        sequence=int(values["sequence"]),
    )
