"""Events out: the outbox relay from the table's stream, webhooks and their endpoints,
signing, delivery, the delivery log and replays."""
