"""The pinned Unicode tables the text rules read are the Unicode Character Database's, as
the `regex` package carries it: a table that drifts from it (edited by hand, or a newer
database not yet generated) fails here; regenerate with ``python -m tools.unicode_tables``."""

from __future__ import annotations

from incidents import unicode_tables
from tools.unicode_tables import PROPERTIES, ranges


def test_every_pinned_table_is_the_databases() -> None:
    for name, (property_name, _) in PROPERTIES.items():
        assert getattr(unicode_tables, name) == tuple(ranges(property_name)), name


def test_the_tables_name_the_characters_round_4_stored() -> None:
    """The hostile-use round's findings are default-ignorable by the database itself."""
    ignorable = unicode_tables.DEFAULT_IGNORABLE
    for code in (0x034F, 0x17B4, 0x180B, 0xFE00, 0xE0100, 0xE01EF):
        assert any(a <= code <= b for a, b in ignorable), hex(code)
