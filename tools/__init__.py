"""Command-line helpers for a deployed stage."""
