"""The one definition of the single table: CDK, tests and the local runtime all read it."""

from dynashard.schema import IndexSchema, TableSchema

TABLE_SCHEMA = TableSchema(
    partition_key="PK",
    sort_key="SK",
    indexes=tuple(IndexSchema(f"GSI{n}", f"GSI{n}PK", f"GSI{n}SK") for n in (1, 2, 3)),
    ttl_attribute="ExpiresAt",
)

RESERVED_INDEXES = frozenset({"GSI3"})
"""Indexes in the schema that no access pattern uses yet. GSI3 is kept so that the next
pattern (for example incidents by service or by assignee) needs no table change: a GSI is
sparse, so an index no item writes keys for stores nothing and costs nothing. Contributor
Insights, billed per rule, stays off for it until a pattern writes to it."""
