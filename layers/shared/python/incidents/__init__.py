"""The incident-management domain, built on the generic `dynashard` library."""
