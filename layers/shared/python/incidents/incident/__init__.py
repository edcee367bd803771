"""Incidents: create, change, read and list them, and their participants' copies."""
