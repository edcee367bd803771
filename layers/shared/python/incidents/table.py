"""The one definition of the single table: CDK, tests and the local runtime all read it,
and code names its keys and indexes from here, never by spelling them."""

from dynashard import IndexSchema, TableSchema
from dynashard.query import Item

GSI1 = IndexSchema("GSI1", "GSI1PK", "GSI1SK")
"""A participant's incidents (a person's or a team's, by state and time), a team's members."""
GSI2 = IndexSchema("GSI2", "GSI2PK", "GSI2SK")
"""An account's incidents by state, and its timeline events, by time."""
GSI3 = IndexSchema("GSI3", "GSI3PK", "GSI3SK")
"""An incident by its number, and the timers due in a minute."""
TABLE_SCHEMA = TableSchema(
    partition_key="PK",
    sort_key="SK",
    indexes=(GSI1, GSI2, GSI3),
    ttl_attribute="ExpiresAt",
    stream_view="NEW_IMAGE",
)
"""The stream carries the timeline's events out (new images: an event is only ever put)."""
PK, SK = TABLE_SCHEMA.partition_key, TABLE_SCHEMA.sort_key
"""The table's key attributes, as items and expressions name them."""


def item_key(pk: str, sk: str) -> Item:
    """The key of the table's item `(pk, sk)`, as DynamoDB's requests take it."""
    return {PK: {"S": pk}, SK: {"S": sk}}


def key_of(item: Item) -> Item:
    """The key of an item read from the table (what a Delete or an Update of it names)."""
    return {PK: item[PK], SK: item[SK]}
