"""Escalation policies (PagerDuty's): who is paged for an incident, level after level."""
