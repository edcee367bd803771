"""Timers: due times kept in the table and fired once each by a sweep."""
