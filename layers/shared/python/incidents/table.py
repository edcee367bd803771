"""The one definition of the single table: CDK, tests and the local runtime all read it."""

from dynashard import IndexSchema, TableSchema

TABLE_SCHEMA = TableSchema(
    partition_key="PK",
    sort_key="SK",
    indexes=tuple(IndexSchema(f"GSI{n}", f"GSI{n}PK", f"GSI{n}SK") for n in (1, 2, 3)),
    ttl_attribute="ExpiresAt",
    stream_view="NEW_IMAGE",
)
"""The stream carries the timeline's events out (new images: an event is only ever put)."""
