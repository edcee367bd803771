"""The ordered cursor's binary state: what goes in comes out, and nothing else parses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dynashard import CursorCodec, InvalidCursorError
from dynashard.keys.key_span import KeySpan
from dynashard.query.ordered.state import ENDED, MAX_STATE_BYTES, OrderedState

STREAMS = 1024
KEYS = st.text(min_size=1, max_size=40)


@st.composite
def states(draw: st.DrawFn) -> OrderedState:
    last = draw(KEYS)
    span = None
    if draw(st.booleans()):
        span = KeySpan(draw(KEYS), last, draw(st.integers(1, 10**6)))
    windows = draw(
        st.lists(
            st.tuples(
                KEYS,
                st.lists(st.integers(0, STREAMS - 1), min_size=1, max_size=40, unique=True).map(
                    lambda m: tuple(sorted(m))
                ),
            ),
            max_size=60,
        )
    )
    quiet = tuple(draw(st.lists(st.integers(0, 3), min_size=STREAMS, max_size=STREAMS)))
    if not any(quiet):
        quiet = ()
    final = draw(st.booleans())
    return OrderedState(last, tuple(windows), "0123456789abcdef", 1_700_000_000, span, quiet, final)


@settings(max_examples=200, deadline=None)
@given(state=states())
def test_a_state_comes_back_as_written_with_the_windows_that_fit(state: OrderedState) -> None:
    data = state.dumps()
    back = OrderedState.loads(data)
    assert (back.last_key, back.span, back.quiet) == (state.last_key, state.span, state.quiet)
    assert back.plan == state.plan[: len(back.plan)]
    whole = bool(state.plan) and len(back.plan) == len(state.plan)
    assert back.final == (state.final and whole), "the rest of the list only if all fitted"
    if back.plan or back.quiet:
        assert (back.streams, back.made_at) == (state.streams, state.made_at)
    if len(state.last_key.encode()) < 100:
        assert len(data) <= MAX_STATE_BYTES


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200))
def test_any_other_bytes_are_a_clear_error(data: bytes) -> None:
    """Only the codec's MAC keeps forged states out; the parser still never fails otherwise."""
    parsed = _parse(data)
    if isinstance(parsed, InvalidCursorError):
        assert "malformed" in str(parsed) or "streams" in str(parsed)
    else:  # what parses writes back to the same fields
        again = OrderedState.loads(parsed.dumps())
        fields = (parsed.last_key, parsed.span, parsed.plan, parsed.quiet)
        assert (again.last_key, again.span, again.plan, again.quiet) == fields


def _parse(data: bytes) -> OrderedState | InvalidCursorError:
    try:
        return OrderedState.loads(data)
    except InvalidCursorError as error:
        return error


def test_a_plan_naming_streams_the_query_lacks_is_not_used() -> None:
    """Made for another stream list (the same binding after a shard count changed), it
    parses, and is dropped rather than refused."""
    data = OrderedState("k", (("j", (5,)),), "0123456789abcdef", 1, None, (0,) * 5 + (1,)).dumps()
    state = OrderedState.loads(data)
    assert state.usable("0123456789abcdef", 2, 6) == state
    assert state.usable("0123456789abcdef", 2, 5) == OrderedState("k")


def test_the_cursor_stays_under_1024_characters_at_1024_streams() -> None:
    """Long keys, a full quiet field and a plan as long as it gets: the token still fits."""
    last = "OPEN#2026-11-23T12:00:00.000000Z#" + "x" * 60
    windows = tuple((f"OPEN#2026-11-2{n % 10}", tuple(range(n, 1024, 7))) for n in range(80))
    quiet = tuple(ENDED if n % 3 else 1 for n in range(1024))
    state = OrderedState(last, windows, "0123456789abcdef", 1_700_000_000, None, quiet)
    token = CursorCodec(b"s" * 32).encode(state.dumps(), "binding")
    assert len(token) < 1024


def test_quiet_counts_give_way_where_they_cannot_fit() -> None:
    state = OrderedState("k", (), "0123456789abcdef", 1, None, (ENDED,) * 8192)
    assert OrderedState.loads(state.dumps()).quiet == ()


def test_a_stale_or_foreign_state_keeps_only_the_key_and_span() -> None:
    span = KeySpan("b", "a", 3)
    state = OrderedState("a", (("0", (1,)),), "0123456789abcdef", 1000, span, (0, ENDED))
    assert state.usable("0123456789abcdef", 1030, 2) == state
    for digest, now in (("fedcba9876543210", 1030), ("0123456789abcdef", 1061)):
        assert state.usable(digest, now, 2) == OrderedState("a", span=span)
