"""On-call schedules: who is on call at an instant, as a pure function of a schedule's
stored layer versions, its overrides and the instant (docs: On-call schedules)."""
