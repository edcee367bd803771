"""The fan-out engine: streams, strategies, pages, budgets and signed cursors."""

from dynashard.item import Item
from dynashard.query.budget import PageBudget
from dynashard.query.capacity import item_size, query_read_units
from dynashard.query.cursor import CursorCodec
from dynashard.query.fanout import FanOutEngine, FanOutQuery, Strategy, client_config, page_steps
from dynashard.query.page import Page, PageStats
from dynashard.query.reader import Read, StreamRead, Waves
from dynashard.query.sort_range import Bound, SortKeyRange
from dynashard.query.streams import PartitionStream

__all__ = [
    "Bound",
    "CursorCodec",
    "FanOutEngine",
    "FanOutQuery",
    "Item",
    "Page",
    "PageBudget",
    "PageStats",
    "PartitionStream",
    "Read",
    "SortKeyRange",
    "Strategy",
    "StreamRead",
    "Waves",
    "client_config",
    "item_size",
    "page_steps",
    "query_read_units",
]
