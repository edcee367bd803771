"""The timeline: one event per change, written in the change's transaction, and read back."""
