"""Maintenance windows (PagerDuty's, with incident.io's ``resolve_on_end``): while one is on,
its team's or integration's alerts open and move nothing and are kept as suppressed."""
