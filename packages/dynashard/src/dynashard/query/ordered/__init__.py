"""The ``ordered`` strategy: an exact k-way merge (merge), its cursor state (state), the
limits it learns a stream at a time (learned), and a page of it (pages)."""
