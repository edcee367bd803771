"""Lambda handlers: thin Powertools resolvers over the `incidents` services, one per group."""
