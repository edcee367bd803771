"""Machine access: secret keys (shared by integrations and API keys) and API keys."""
