"""Events in: integrations (keys monitoring tools send alerts with) and alert ingestion."""
