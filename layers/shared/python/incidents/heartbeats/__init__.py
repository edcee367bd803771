"""Heartbeats (Opsgenie's): a named check that must be pinged within its interval."""
