"""``make dev``'s demo accounts: incidents, webhooks, an integration and an API key."""
