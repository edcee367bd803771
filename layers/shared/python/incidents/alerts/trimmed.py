"""An alert's ``custom_details`` within what an incident keeps.

PagerDuty takes alerts up to 512 KB and monitoring tools trim only above that, while an
incident keeps at most `incidents.items.MAX_DETAILS_BYTES` of details (an item is 400 KB):
an alert that opens an incident has its details trimmed to fit, with a marker saying so,
rather than refused (a refused alert is a lost page; Alertmanager does not retry a 4xx).
"""

from __future__ import annotations

import json
from typing import Any

MARKER = "_trimmed"
"""The key that says details were trimmed, and how."""
MARKER_BYTES = 4096
"""Room kept for the marker itself: four numbers and `NAMED_KEYS` names of at most
`NAME_CHARACTERS` characters, each at most 6 bytes as JSON (a control character's
``\\uXXXX``)."""
NAMED_KEYS = 20
"""Keys the marker names at most (dropped or cut); it counts the rest."""
NAME_CHARACTERS = 32
"""A named key's characters at most, so the marker stays within `MARKER_BYTES`."""


def size_of(value: Any) -> int:
    """Bytes of `value` as stored: compact JSON, UTF-8."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def trimmed(details: dict[str, Any], budget: int) -> dict[str, Any]:
    """`details` within `budget` bytes of JSON: entries kept whole, in order, while they
    fit; the first that does not is cut (a string to its head; anything else to the head
    of its JSON text) and the rest dropped; a `MARKER` entry says how many bytes were sent
    and which keys were cut or dropped. Unchanged when it fits."""
    sent = size_of(details)
    if sent <= budget:
        return details
    room = budget - MARKER_BYTES
    kept: dict[str, Any] = {}
    cut: list[str] = []
    used = size_of({})  # the braces; each entry adds its own size and a comma
    for name, value in details.items():
        entry = size_of({name: value}) - size_of({}) + (1 if kept else 0)
        if not cut and used + entry <= room:
            kept[name], used = value, used + entry
            continue
        left = room - used - (size_of({name: ""}) - size_of({}) + (1 if kept else 0))
        if not cut and left > 0:
            kept[name] = _head(value, left)
        cut.append(name)
    kept[MARKER] = {
        "sent_bytes": sent,
        "kept_bytes": size_of(kept),
        "cut_or_dropped": [name[:NAME_CHARACTERS] for name in cut[:NAMED_KEYS]],
        "more_dropped": max(0, len(cut) - NAMED_KEYS),
    }
    return kept


def _head(value: Any, room: int) -> str:
    """The start of `value` (its JSON text unless a string) within `room` bytes as JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    low, high = 0, len(text)
    while low < high:  # the longest prefix whose JSON string fits
        middle = (low + high + 1) // 2
        if size_of(text[:middle] + "…") <= room:
            low = middle
        else:
            high = middle - 1
    return text[:low] + "…"
