"""Local runtime: an embedded DynamoDB-compatible server and (later) the local API gateway."""
