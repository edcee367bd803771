"""Insights: MTTA and MTTR per team, severity and day, live from the timeline."""
