"""What an ``ordered`` cursor carries: the last key returned and, when it fits, a plan.

A page's merge knows every item of every stream up to its *horizon* (the least-read
unfinished stream's position). The items it holds beyond the page, up to the horizon, are
therefore exactly the next pages: the plan cuts them into windows of one page each, and
for each window records where it ends and the streams holding an item in it. A page read
from a plan queries only those streams, bounded by the window: one round trip, one request
per contributing stream. A plan only fits the stream list it was made for (a digest of the
streams says which); with another list, or once its windows are used up, the next page
reads every stream again and makes a new plan.

Without a plan, the cursor may carry the page's key span (`key_span`): where the page
started and how many items it returned, from which the next page bounds its reads; and, in
the windows' place, what the page learned of each stream (`OrderedState.known`): how far
past the last key it holds nothing, so that the next page does not read that again.

The state is binary, so that a plan of dozens of pages fits a cursor of under 1,024
characters. Every count is an unsigned LEB128 varint:

- flags (1 byte): 1 = a key span follows the last key, 2 = a plan follows, 4 = per-stream
  quiet counts follow, 8 = the plan holds the rest of the list (every stream was read to its
  end when it was made, and every window fitted), 16 = the windows are known reaches, not
  planned pages (such a window may name no stream);
- the last key: its UTF-8 length and bytes;
- the span: its start front-coded against the last key (bytes shared, suffix length,
  suffix), then its item count;
- with a plan or quiet counts: the stream digest (8 bytes), when they were made (epoch
  seconds), the quiet counts (their number, then two bits a stream), then the plan's
  windows;
- a window: its end key front-coded against the previous end (bytes shared, suffix length,
  suffix), then its streams as ``count << 1 | bitset`` followed by a bitset of `count`
  bytes, or by `count` ascending indexes coded as gaps, whichever is shorter.

Window ends are the shortest keys that separate a window from the next item (see
`separator`), a few bytes rather than a whole sort key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from dynashard.errors import InvalidCursorError
from dynashard.keys.key_span import KeySpan, common_prefix

Window = tuple[str, tuple[int, ...]]
"""A planned page: the key it ends at (inclusive) and the indexes of the streams holding its
items."""
MAX_STATE_BYTES = 740
"""Plans are cut to keep the whole cursor under 1,024 characters (version, state and MAC,
base64url: at most 1,010)."""
PLAN_SECONDS = 60
"""How long a plan is trusted. An item written into a planned page's key span, in a stream
the plan does not list, is only seen once the plan is dropped: plans are for a reader paging
now, and a cursor kept longer reads every stream again."""
DIGEST_BYTES = 8
SPAN, PLAN, QUIET, FINAL, KNOWN = 1, 2, 4, 8, 16
"""Flags: which optional fields follow the last key (`KNOWN`: the windows are what a page
cut by its budget knew, not pages)."""
MAX_KNOWN = 24
"""Known windows a page passes on: each stream's reach is rounded down to one of this many
keys."""
PROBE = 1
"""`quiet`: a stream that supplied nothing to the last page is read without a bound on the
next, to learn where its next item is (or that it has ended)."""
ENDED = 3
"""`quiet`: a stream with nothing after the cursor, skipped until `PLAN_SECONDS` pass."""


@dataclass(frozen=True)
class OrderedState:
    """The last key returned, the plan for the next pages and the streams it refers to."""

    last_key: str
    plan: tuple[Window, ...] = ()
    streams: str = ""
    """`streams_digest` of the list the plan and `quiet` were made for (16 hex digits)."""
    made_at: int = 0
    """When the plan (or the oldest `ENDED` in `quiet`) was learned (epoch seconds): older
    than `PLAN_SECONDS`, neither is used."""
    span: KeySpan | None = None
    """The page's key span (its end is `last_key`), for the next page's bound."""
    quiet: tuple[int, ...] = ()
    """Per stream: pages in a row it supplied nothing to (up to `PROBE`), or `ENDED`."""
    final: bool = False
    """Whether the plan's windows hold every item left: the page that ends the last window
    ends the list (`has_more` false, no empty page after it)."""
    known: tuple[Window, ...] = ()
    """Instead of a plan: what the page's reads proved past the last key. A stream not
    named by the first k windows holds nothing up to the k-th's end, so the next page reads
    it from there, not again from the last key."""

    def usable(self, digest: str, now: float, streams: int) -> OrderedState:
        """This state without the plan and `quiet` if they were made for another list of
        streams (a shard count grew: the binding is the same, the list is not; they may name
        streams it lacks) or too long ago."""
        fresh = 0 <= now - self.made_at <= PLAN_SECONDS
        named = all(i < streams for _, members in self.plan + self.known for i in members)
        if self.streams == digest and fresh and named and len(self.quiet) in (0, streams):
            return self
        return self.last_key_only()

    def last_key_only(self) -> OrderedState:
        """This state without what it learned of each stream: where the list is, only."""
        return OrderedState(self.last_key, span=self.span)

    def expecting_writes(self) -> OrderedState:
        """This state for a list whose new items land after the cursor: a stream marked
        `ENDED` is probed again instead of skipped, and the plan no longer ends the list."""
        quiet = tuple(PROBE if q == ENDED else q for q in self.quiet)
        return replace(self, quiet=quiet, final=False)

    def dumps(self) -> bytes:
        """The binary state, with as many planned windows as fit `MAX_STATE_BYTES`."""
        span = b""
        if self.span is not None:
            span = _front_coded(self.last_key, self.span.start) + _varint(self.span.items)
        quiet = _pack_quiet(self.quiet)
        fixed = 1 + len(_text(self.last_key)) + len(span) + DIGEST_BYTES + 5
        if fixed + len(quiet) > MAX_STATE_BYTES:
            quiet = b""  # thousands of streams: the counts are a saving, never a must
        fixed += len(quiet)
        windows = bytearray()
        previous = self.last_key
        written = 0
        for end, members in self.plan or self.known:
            window = _front_coded(previous, end) + encode_members(members)
            if fixed + len(windows) + len(window) > MAX_STATE_BYTES:
                break
            windows += window
            previous, written = end, written + 1
        final = self.final and written == len(self.plan) > 0
        kind = KNOWN if self.known and not self.plan else PLAN
        flags = (SPAN if span else 0) | (kind if windows else 0) | (QUIET if quiet else 0)
        flags |= FINAL if final else 0
        state = bytes([flags]) + _text(self.last_key) + span
        if windows or quiet:
            state += bytes.fromhex(self.streams) + _varint(self.made_at) + quiet + windows
        return state

    @classmethod
    def loads(cls, data: bytes) -> OrderedState:
        """Parse a cursor's state, whatever stream list it was made for (see `usable`)."""
        reader = _Reader(data)
        try:
            flags = reader.take(1)[0]
            if flags & ~(SPAN | PLAN | QUIET | FINAL | KNOWN) or (
                (flags & FINAL and not flags & PLAN) or (flags & PLAN and flags & KNOWN)
            ):
                raise ValueError("unknown flags")
            last = reader.take(reader.varint())
            span = None
            if flags & SPAN:
                start = reader.front_coded(last).decode()
                span = KeySpan(start, last.decode(), reader.varint())
            if not flags & (PLAN | QUIET | KNOWN):
                if not reader.done():
                    raise ValueError("the state goes on after its last field")
                return cls(last.decode(), span=span)
            digest = reader.take(DIGEST_BYTES).hex()
            made_at = reader.varint()
            quiet: tuple[int, ...] = ()
            if flags & QUIET:
                count = reader.varint()
                quiet = _unpack_quiet(reader.take((count + 3) // 4), count)
            previous, windows = last, []
            while not reader.done():
                end = reader.front_coded(previous)
                windows.append((end.decode(), reader.members(empty=bool(flags & KNOWN))))
                previous = end
            if flags & KNOWN:
                return cls(last.decode(), (), digest, made_at, span, quiet, known=tuple(windows))
            final = bool(flags & FINAL)
            return cls(last.decode(), tuple(windows), digest, made_at, span, quiet, final)
        except (ValueError, IndexError) as exc:  # UnicodeDecodeError is a ValueError
            raise InvalidCursorError("the cursor is malformed") from exc


def _pack_quiet(quiet: Sequence[int]) -> bytes:
    """The stream count, then two bits a stream, four streams a byte; nothing when no stream
    is quiet."""
    if not any(quiet):
        return b""
    packed = bytearray((len(quiet) + 3) // 4)
    for index, value in enumerate(quiet):
        packed[index >> 2] |= value << ((index & 3) * 2)
    return _varint(len(quiet)) + bytes(packed)


def _unpack_quiet(packed: bytes, streams: int) -> tuple[int, ...]:
    return tuple(packed[i >> 2] >> ((i & 3) * 2) & 3 for i in range(streams))


def _text(value: str) -> bytes:
    raw = value.encode()
    return _varint(len(raw)) + raw


def _front_coded(previous: str, key: str) -> bytes:
    """`key` as the number of leading UTF-8 bytes it shares with `previous` and the rest."""
    shared, raw = len(common_prefix(previous, key).encode()), key.encode()
    return _varint(shared) + _varint(len(raw) - shared) + raw[shared:]


def encode_members(members: Sequence[int]) -> bytes:
    """Ascending stream indexes as gaps, or as a bitset where that is shorter."""
    gaps = bytearray()
    previous = -1
    for index in members:
        gaps += _varint(index - previous - 1)
        previous = index
    listed = _varint(len(members) << 1) + gaps
    bits = bytearray((max(members, default=0) >> 3) + 1)
    for index in members:
        bits[index >> 3] |= 1 << (index & 7)
    packed = _varint(len(bits) << 1 | 1) + bits
    return bytes(packed if len(packed) < len(listed) else listed)


def _varint(value: int) -> bytes:
    if value < 0:
        raise ValueError("varints are unsigned")
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


class _Reader:
    """Reads what `OrderedState.dumps` wrote; anything else raises ValueError or IndexError."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 0

    def done(self) -> bool:
        return self._at == len(self._data)

    def take(self, count: int) -> bytes:
        if self._at + count > len(self._data):
            raise IndexError("the state ends early")
        chunk = self._data[self._at : self._at + count]
        self._at += count
        return chunk

    def varint(self) -> int:
        value = shift = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ValueError("a varint is too long")

    def front_coded(self, previous: bytes) -> bytes:
        """A key `_front_coded` wrote against `previous`."""
        shared = self.varint()
        if shared > len(previous):
            raise ValueError("a key shares more than the previous one holds")
        return previous[:shared] + self.take(self.varint())

    def members(self, *, empty: bool) -> tuple[int, ...]:
        """A window's stream indexes (none only where `empty`: a window of what is known
        may name no stream, a planned page names at least one)."""
        header = self.varint()
        count = header >> 1
        if header & 1:
            bits = self.take(count)
            found = tuple(i for i in range(count * 8) if bits[i >> 3] >> (i & 7) & 1)
        else:
            indexes, previous = [], -1
            for _ in range(count):
                previous += self.varint() + 1
                indexes.append(previous)
            found = tuple(indexes)
        if not found and not empty:
            raise ValueError("a window names no stream")
        return found


def separator(last: str, upper: str | None, *, inclusive: bool, descending: bool) -> str:
    """The shortest key a window can end at: `last` (its last item) is not after it, and
    `upper` (the next item, or with `inclusive` the horizon) is not before it (strictly after,
    unless `inclusive`). Keys compare by code point, which is UTF-8 byte order: DynamoDB's."""
    if upper is None or upper == last:
        return last
    shared = len(common_prefix(last, upper))
    if descending:  # upper < cut <= last: last's prefix one past the point they differ
        return last[: shared + 1] if shared < len(last) else last
    cut = upper[: shared + 1]  # last < cut <= upper ascending
    return cut if inclusive or len(cut) < len(upper) else last


def plannable_pages(limit: int, streams: int, key_bytes: int, most: int) -> int:
    """About how many pages a cursor can plan: each window takes a separator of a few bytes
    and its streams (gap-coded indexes, or a bitset of `streams` bits)."""
    gap_bytes = 1 if streams <= 128 * min(limit, streams) else 2
    members = min(min(limit, streams) * gap_bytes, streams // 8 + 1) + 1
    window = min(key_bytes, 6) + 2 + members
    return max(0, min(most, (MAX_STATE_BYTES - key_bytes - 16) // window))
